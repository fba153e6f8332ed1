package io.kvreuse.admin;

import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ServerWebExchange;

/** The sign-in form: an OPERATOR API token, nothing else. */
@Controller
class LoginController {

    @GetMapping("/login")
    String login(@RequestParam(required = false) @Nullable String error, ServerWebExchange exchange, Model model) {
        if (exchange.getRequest().getQueryParams().containsKey("api")) {
            // sent here from an API link opened in the browser without a token
            model.addAttribute("apiNote", true);
        }
        if (error != null) {
            model.addAttribute("error", message(error));
        }
        if (exchange.getRequest().getQueryParams().containsKey("logout")) {
            model.addAttribute("info", "You have signed out.");
        }
        return "admin/login";
    }

    static String message(String code) {
        if (code.startsWith("role-")) {
            String role = code.substring("role-".length()).toUpperCase(Locale.ROOT);
            if (role.matches("ROUTER|ENGINE|AGENT")) {
                return "That is a valid " + role + " token, but only OPERATOR tokens can sign in to the dashboard.";
            }
        }
        return switch (code) {
            case "revoked" -> "Your token was revoked; the session has ended. Sign in with an active operator token.";
            default -> "Unknown or revoked token. Paste an active OPERATOR API token.";
        };
    }
}
