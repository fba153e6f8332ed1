package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.security.CurrentPrincipal;
import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.ReuseSettingsService;
import jakarta.validation.Valid;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.validation.BindingResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** The reuse settings: view and edit, validated by the settings' own rules, audited with the operator. */
@Controller
class SettingsPageController {

    private final ReuseSettingsService settings;

    SettingsPageController(ReuseSettingsService settings) {
        this.settings = settings;
    }

    @GetMapping("/admin/settings")
    Mono<String> view(ServerWebExchange exchange, Model model) {
        String saved = exchange.getRequest().getQueryParams().getFirst("saved");
        return settings.read().map(stored -> {
            model.addAttribute("form", SettingsForm.of(stored));
            model.addAttribute("stored", stored);
            model.addAttribute("defaultsForm", SettingsForm.of(ReuseSettings.defaults()));
            // only right after this operator's save, and only while that save is still the current version
            model.addAttribute("saved", Long.toString(stored.version()).equals(saved));
            return "admin/settings";
        });
    }

    @PostMapping("/admin/settings")
    Mono<String> save(
            @Valid @ModelAttribute("form") SettingsForm form,
            BindingResult errors,
            Model model,
            ServerWebExchange exchange) {
        ReuseSettings next = form.toSettings(errors);
        if (next == null) {
            exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
            return redisplay(model);
        }
        return settings.read().flatMap(stored -> {
            SettingsChanges changes = SettingsChanges.between(stored.settings(), next);
            boolean current = java.util.Objects.equals(form.getVersion(), stored.version());
            String fingerprint = changes.fingerprint(stored.version());
            if (current && changes.needsConfirmation() && !fingerprint.equals(form.getConfirmation())) {
                // a fleet-wide switch: nothing is saved until the operator confirms this very change
                model.addAttribute("stored", stored);
                model.addAttribute("changes", changes);
                form.setConfirmation(fingerprint);
                return Mono.just("admin/settings-confirm");
            }
            return replace(form, next, model, exchange);
        });
    }

    private Mono<String> replace(SettingsForm form, ReuseSettings next, Model model, ServerWebExchange exchange) {
        String reason = form.getReason().isBlank() ? null : form.getReason().strip();
        return CurrentPrincipal.get()
                .flatMap(p -> settings.replace(next, form.getVersion(), p.actor(), reason))
                .map(stored -> "redirect:/admin/settings?saved=" + stored.version())
                .onErrorResume(KvReuseException.class, e -> {
                    // someone else saved first: show their values' version, keep the operator's edit
                    exchange.getResponse().setStatusCode(HttpStatus.CONFLICT);
                    model.addAttribute("conflict", e.getMessage());
                    return redisplay(model);
                });
    }

    private Mono<String> redisplay(Model model) {
        return settings.read().map(stored -> {
            model.addAttribute("stored", stored);
            model.addAttribute("defaultsForm", SettingsForm.of(ReuseSettings.defaults()));
            model.addAttribute("saved", false);
            return "admin/settings";
        });
    }
}
