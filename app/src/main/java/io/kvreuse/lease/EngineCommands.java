package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.store.PgNotifications;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * The engine command channel: long polls that hand out an incarnation's open commands and hide them
 * for {@code redeliverAfter}, and acknowledgements that act on the lease. Engines must treat a
 * command id they already handled as done (a command is handed out again until acknowledged).
 */
@Service
public class EngineCommands {

    private final Incarnations incarnations;
    private final CommandStore commands;
    private final AckBatches acks;
    private final LeaseMetrics metrics;
    private final LongPoll longPoll;
    private final TransactionalOperator tx;
    private final LeaseProperties props;
    private final java.time.Clock clock;

    EngineCommands(
            Incarnations incarnations,
            CommandStore commands,
            AckBatches acks,
            LeaseMetrics metrics,
            LongPoll longPoll,
            TransactionalOperator tx,
            LeaseProperties props,
            java.time.Clock clock) {
        this.incarnations = incarnations;
        this.commands = commands;
        this.acks = acks;
        this.metrics = metrics;
        this.longPoll = longPoll;
        this.tx = tx;
        this.props = props;
        this.clock = clock;
    }

    /** Lease tuning that is not an operator setting. */
    @ConfigurationProperties("kvreuse.leases")
    record LeaseProperties(Duration commandRedelivery, int pollBatch, Duration sweepInterval, int sweepBatch) {
        LeaseProperties {
            commandRedelivery = commandRedelivery == null ? Duration.ofSeconds(2) : commandRedelivery;
            pollBatch = pollBatch <= 0 ? 64 : pollBatch;
            sweepInterval = sweepInterval == null ? Duration.ofMillis(500) : sweepInterval;
            sweepBatch = sweepBatch <= 0 ? 500 : sweepBatch;
        }
    }

    /** Open commands of an incarnation the principal owns, waiting up to {@code wait} for some. */
    public Mono<List<EngineCommand>> poll(UUID incarnationId, Duration wait, ApiPrincipal principal) {
        return incarnations
                .requireOwnership(incarnationId, principal)
                .then(longPoll.poll(
                        PgNotifications.COMMANDS, incarnationId.toString(), wait, () -> claim(incarnationId)));
    }

    /** One statement, outside any transaction: the claimed commands with their leases, or until when none is due. */
    private Mono<LongPoll.Look<EngineCommand>> claim(UUID incarnationId) {
        Instant now = clock.instant();
        return commands.claim(incarnationId, now, now.plus(props.commandRedelivery()), props.pollBatch())
                .collectList()
                .map(rows -> new LongPoll.Look<>(
                        rows.stream()
                                .filter(c -> c.command() != null)
                                .map(c -> EngineCommand.of(c.command(), c.lease()))
                                .toList(),
                        rows.getFirst().quietUntil()));
    }

    /**
     * Acknowledges many commands of one incarnation in order, as if each were sent alone, in one
     * transaction: an item's problem is answered in its place and does not stop the rest; a stale
     * {@code fencingEpoch} refuses the whole batch (409).
     */
    public Mono<List<ItemResult<EngineCommand.Ack>>> acks(
            UUID incarnationId, long epoch, List<AckBatches.AckItem> items, ApiPrincipal principal) {
        return incarnations.requireOwnership(incarnationId, principal).flatMap(inc -> {
            if (inc.fencingEpoch() != epoch) {
                metrics.stale("incarnation");
                return Mono.error(LeaseProblems.staleEpoch("incarnation " + incarnationId, epoch, inc.fencingEpoch()));
            }
            return acks.acks(incarnationId, items, principal.actor());
        });
    }
}
