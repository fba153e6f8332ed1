package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.settings.ReuseSettingsService;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import reactor.core.publisher.Mono;

/** The dashboard's first page, and the JSON its charts and counters refresh from. */
@Controller
class OverviewController {

    private final FleetCounts counts;
    private final MetricsSampler sampler;
    private final ReuseSettingsService settings;
    private final ReuseHeadline headline;

    OverviewController(
            FleetCounts counts, MetricsSampler sampler, ReuseSettingsService settings, ReuseHeadline headline) {
        this.counts = counts;
        this.sampler = sampler;
        this.settings = settings;
        this.headline = headline;
    }

    @GetMapping("/admin")
    Mono<String> overview(
            @RequestParam(defaultValue = DEFAULT_WINDOW) String window,
            @RequestParam(required = false) @Nullable String until,
            Model model) {
        ReuseHeadline.Window chosen = window(window);
        Instant end = until(until);
        model.addAttribute("windowEnd", end);
        return Mono.zip(counts.snapshot(), settings.read(), figures(chosen, end))
                .map(t -> {
                    model.addAttribute("counts", t.getT1());
                    model.addAttribute("settings", t.getT2());
                    model.addAttribute("headline", t.getT3());
                    model.addAttribute("headlineText", HeadlineText.of(t.getT3()));
                    model.addAttribute("window", chosen);
                    model.addAttribute("windows", ReuseHeadline.Window.values());
                    model.addAttribute("decisions", sampler.decisionsByReason());
                    model.addAttribute("latest", sampler.series().latest());
                    return "admin/overview";
                });
    }

    /** Everything the overview shows, for its periodic refresh (session-authenticated). */
    @GetMapping("/admin/api/overview")
    @ResponseBody
    Mono<Map<String, Object>> overviewJson(
            @RequestParam(defaultValue = DEFAULT_WINDOW) String window,
            @RequestParam(required = false) @Nullable String until) {
        ReuseHeadline.Window chosen = window(window);
        Instant end = until(until);
        return Mono.zip(counts.snapshot(), figures(chosen, end)).map(t -> {
            var snapshot = t.getT1();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("reuseEnabled", settings.current().enabled());
            body.put("incarnations", snapshot.incarnations());
            body.put("banks", snapshot.banks());
            body.put("leases", snapshot.leases());
            body.put("orders", snapshot.orders());
            body.put("attention", snapshot.attention());
            body.put("decisions", sampler.decisionsByReason());
            body.put("series", sampler.series().columns());
            body.put("window", chosen.key());
            body.put("until", end);
            body.put("headline", t.getT2());
            body.put("headlineText", HeadlineText.of(t.getT2()));
            return body;
        });
    }

    static final String DEFAULT_WINDOW = "1h";

    private Mono<ReuseHeadline.Figures> figures(ReuseHeadline.Window window, @Nullable Instant until) {
        return until == null ? headline.last(window) : headline.ending(window, until);
    }

    /** Where an earlier window ends: an RFC 3339 instant, not in the future; absent means now. */
    private @Nullable Instant until(@Nullable String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        Instant t;
        try {
            t = java.time.OffsetDateTime.parse(text.strip()).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            throw invalidParameter("until must be an RFC 3339 time such as 2026-01-31T12:00:00Z");
        }
        if (t.isAfter(headline.now())) {
            throw invalidParameter("until must not be in the future");
        }
        return t;
    }

    private static KvReuseException invalidParameter(String detail) {
        return new KvReuseException(ProblemType.INVALID_PARAMETER, detail);
    }

    /** The chosen headline window; anything but the offered ones is a 400 {@code invalid-parameter}. */
    private static ReuseHeadline.Window window(String key) {
        ReuseHeadline.Window w = ReuseHeadline.Window.of(key);
        if (w == null) {
            throw new KvReuseException(
                    ProblemType.INVALID_PARAMETER,
                    "window must be one of " + String.join(", ", ReuseHeadline.Window.keys()));
        }
        return w;
    }
}
