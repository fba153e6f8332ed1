package io.kvreuse.admin;

import io.kvreuse.settings.ReuseSettingsService;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;
import reactor.core.publisher.Mono;

/** The dashboard's first page, and the JSON its charts and counters refresh from. */
@Controller
class OverviewController {

    private final FleetCounts counts;
    private final MetricsSampler sampler;
    private final ReuseSettingsService settings;

    OverviewController(FleetCounts counts, MetricsSampler sampler, ReuseSettingsService settings) {
        this.counts = counts;
        this.sampler = sampler;
        this.settings = settings;
    }

    @GetMapping("/admin")
    Mono<String> overview(Model model) {
        return Mono.zip(counts.snapshot(), settings.read()).map(t -> {
            model.addAttribute("counts", t.getT1());
            model.addAttribute("settings", t.getT2());
            model.addAttribute("decisions", sampler.decisionsByReason());
            model.addAttribute("latest", sampler.series().latest());
            return "admin/overview";
        });
    }

    /** Everything the overview shows, for its periodic refresh (session-authenticated). */
    @GetMapping("/admin/api/overview")
    @ResponseBody
    Mono<Map<String, Object>> overviewJson() {
        return counts.snapshot().map(snapshot -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("reuseEnabled", settings.current().enabled());
            body.put("incarnations", snapshot.incarnations());
            body.put("banks", snapshot.banks());
            body.put("leases", snapshot.leases());
            body.put("orders", snapshot.orders());
            body.put("attention", snapshot.attention());
            body.put("decisions", sampler.decisionsByReason());
            body.put("series", sampler.series().columns());
            return body;
        });
    }
}
