package io.kvreuse.admin;

import io.kvreuse.bank.BankState;
import io.kvreuse.bank.RetainedBanks;
import io.kvreuse.incarnation.Incarnations;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

/** Retained banks: readiness, epochs, block and pin counts, per rank. */
@Controller
class BankPagesController {

    private final BankQueries banks;
    private final RetainedBanks retained;
    private final Incarnations incarnations;
    private final LeaseQueries leases;

    BankPagesController(BankQueries banks, RetainedBanks retained, Incarnations incarnations, LeaseQueries leases) {
        this.banks = banks;
        this.retained = retained;
        this.incarnations = incarnations;
        this.leases = leases;
    }

    @GetMapping("/admin/banks")
    Mono<String> list(@RequestParam(required = false) @Nullable BankState state, Model model) {
        model.addAttribute("state", state);
        model.addAttribute("states", BankState.values());
        model.addAttribute("limit", IncarnationPagesController.LIST_LIMIT);
        return banks.list(state == null ? null : state.name(), IncarnationPagesController.LIST_LIMIT)
                .collectList()
                .map(list -> {
                    model.addAttribute("banks", list);
                    return "admin/banks";
                });
    }

    @GetMapping("/admin/banks/{bankId}")
    Mono<String> detail(@PathVariable UUID bankId, Model model) {
        return retained.view(bankId)
                .flatMap(bank -> Mono.zip(
                                incarnations.find(bank.incarnationId()),
                                leases.list(null, null, bankId, 50).collectList())
                        .map(t -> {
                            model.addAttribute("bank", bank);
                            model.addAttribute("owner", t.getT1());
                            model.addAttribute("leases", t.getT2());
                            return "admin/bank";
                        }));
    }
}
