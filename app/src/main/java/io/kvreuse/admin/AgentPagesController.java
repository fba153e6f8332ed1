package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/** Node agents: every GPU host's agent with its GPUs, NIXL agent names, liveness and orders in flight. */
@Controller
class AgentPagesController {

    static final int ORDER_LIMIT = 200;

    private final AgentQueries agents;

    AgentPagesController(AgentQueries agents) {
        this.agents = agents;
    }

    @GetMapping("/admin/agents")
    Mono<String> list(
            @RequestParam(required = false) @Nullable String state,
            @RequestParam(required = false) @Nullable String hostId,
            Model model) {
        String wanted = IncarnationPagesController.blankToNull(state);
        if (wanted != null && !AgentQueries.STATES.contains(wanted)) {
            return Mono.error(new KvReuseException(
                    ProblemType.INVALID_PARAMETER,
                    "unknown agent state '" + wanted + "': one of " + String.join(", ", AgentQueries.STATES)));
        }
        String host = IncarnationPagesController.blankToNull(hostId);
        model.addAttribute("state", wanted);
        model.addAttribute("hostId", host);
        model.addAttribute("states", AgentQueries.STATES);
        model.addAttribute("limit", IncarnationPagesController.LIST_LIMIT);
        return agents.list(wanted, host, IncarnationPagesController.LIST_LIMIT).map(list -> {
            model.addAttribute("agents", list);
            return "admin/agents";
        });
    }

    @GetMapping("/admin/agents/{hostId}")
    Mono<String> detail(@PathVariable String hostId, Model model) {
        return agents.find(hostId)
                .switchIfEmpty(Mono.error(() ->
                        new KvReuseException(ProblemType.NO_SUCH_AGENT, "no agent registered for host " + hostId)))
                .flatMap(agent -> agents.ordersInFlight(hostId, ORDER_LIMIT)
                        .collectList()
                        .map(orders -> {
                            model.addAttribute("agent", agent);
                            model.addAttribute("orders", orders);
                            model.addAttribute("orderLimit", ORDER_LIMIT);
                            return "admin/agent";
                        }));
    }
}
