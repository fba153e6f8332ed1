package io.kvreuse.lease;

import io.kvreuse.bank.BlockPins;
import io.kvreuse.error.ItemResult;
import io.kvreuse.incarnation.Incarnations;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.store.LongPoll;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The engine command channel: long polls that hand out an incarnation's open commands and hide them
 * for {@code redeliverAfter}, so concurrent pollers of one incarnation never get one twice within
 * that window and a poller that died gets it again after; and acknowledgements, any number at once,
 * decided on their leases with concurrent requests' reports ({@link ReportGroups}). Engines must
 * treat a command id they already handled as done (a command is handed out again until
 * acknowledged).
 */
@Service
public class EngineCommands {

    /**
     * Hands out up to {@code :limit} visible commands, hidden until {@code :hidden}, each with its
     * lease as it is, and issues the PIN commands (one per rank) of up to {@code :limit} of the
     * incarnation's PROPOSED leases that have none yet, handed out at once: a PROPOSED lease is
     * written as one row, and its donor's PINs exist from the donor's first look on. The leases are
     * locked in id order (shared, the order every lease writer locks them in), so a lease that left
     * PROPOSED meanwhile gets none; two polls that issue at once insert in the same order and the
     * later one skips what the earlier inserted. With none to hand out, the one row without a command
     * says whether one is visible (but locked by another poll) and when the next unacknowledged one
     * becomes visible.
     */
    private static final String CLAIM = """
            WITH pinless AS (
                SELECT l.lease_id, l.created_at FROM lease l
                WHERE l.donor_incarnation_id = :inc AND l.state = 'PROPOSED'
                  AND NOT EXISTS (SELECT 1 FROM engine_command c WHERE c.lease_id = l.lease_id AND c.type = 'PIN')
                ORDER BY l.lease_id LIMIT :limit FOR SHARE OF l),
            issued AS (
                INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at,
                    deliveries)
                SELECT gen_random_uuid(), :inc, p.lease_id, 'PIN', r.rank, p.created_at, :hidden, 1
                FROM pinless p JOIN incarnation_rank r ON r.incarnation_id = :inc
                ORDER BY p.lease_id, r.rank
                ON CONFLICT (lease_id, type, rank) DO NOTHING
                RETURNING command_id, lease_id, type, rank, deliveries, created_at AS command_created),
            due AS (
                SELECT command_id FROM engine_command
                WHERE incarnation_id = :inc AND acked_at IS NULL AND visible_at <= :now
                ORDER BY created_at, rank LIMIT :limit FOR UPDATE SKIP LOCKED),
            claimed AS (
                UPDATE engine_command c SET visible_at = :hidden, deliveries = c.deliveries + 1
                FROM due WHERE c.command_id = due.command_id
                RETURNING c.command_id, c.lease_id, c.type, c.rank, c.deliveries, c.created_at AS command_created),
            handed AS (SELECT * FROM claimed UNION ALL SELECT * FROM issued),
            pending AS (
                SELECT count(*) FILTER (WHERE visible_at <= :now) AS visible, min(visible_at) AS next_visible
                FROM engine_command WHERE incarnation_id = :inc AND acked_at IS NULL)
            SELECT c.command_id, c.type, c.rank, c.deliveries, o.visible, o.next_visible, """ + LeaseRow.JSON + """
             AS lease
            FROM pending o LEFT JOIN (handed c JOIN lease l ON l.lease_id = c.lease_id) ON true
            ORDER BY c.command_created, c.rank, c.command_id
            """;

    private final Incarnations incarnations;
    private final DatabaseClient db;
    private final BlockPins pins;
    private final ReportGroups groups;
    private final PartyChecks parties;
    private final LongPoll longPoll;
    private final LeaseProperties props;
    private final Clock clock;
    private final JsonMapper json;

    EngineCommands(
            Incarnations incarnations,
            DatabaseClient db,
            BlockPins pins,
            ReportGroups groups,
            PartyChecks parties,
            LongPoll longPoll,
            LeaseProperties props,
            Clock clock,
            JsonMapper json) {
        this.incarnations = incarnations;
        this.db = db;
        this.pins = pins;
        this.groups = groups;
        this.parties = parties;
        this.longPoll = longPoll;
        this.props = props;
        this.clock = clock;
        this.json = json;
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
        return db.sql(CLAIM)
                .bind("inc", incarnationId)
                .bind("now", LeaseRow.at(now))
                .bind("hidden", LeaseRow.at(now.plus(props.commandRedelivery())))
                .bind("limit", props.pollBatch())
                .map((r, m) -> r.get("command_id", UUID.class) == null
                        ? LongPoll.Look.<EngineCommand>none(
                                r.get("visible", Long.class),
                                r.get("next_visible", OffsetDateTime.class),
                                Duration.ZERO)
                        : new LongPoll.Look<>(List.of(EngineCommand.of(r, lease(r))), null))
                .all()
                .collectList()
                .map(LongPoll.Look::of);
    }

    private LeaseRow lease(Readable r) {
        return json.readValue(r.get("lease", Json.class).asArray(), LeaseRow.class);
    }

    /**
     * Acknowledges many commands of one incarnation in order, as if each were sent alone, in one
     * transaction shared with concurrent requests' reports: an item's problem is answered in its
     * place and does not stop the rest; a stale {@code fencingEpoch} refuses the whole batch (409).
     * The commands' leases are found and locked by the group's lock statement (a command never
     * changes lease or incarnation; another incarnation's is unknown here), with the blocks
     * acknowledged PINs need.
     */
    public Mono<List<ItemResult<EngineCommand.Ack>>> acks(
            UUID incarnationId, long epoch, List<LeaseRequests.AckEntry> items, ApiPrincipal principal) {
        List<UUID> commandIds =
                items.stream().map(LeaseRequests.AckEntry::commandId).distinct().toList();
        return parties.incarnation(incarnationId, epoch, principal)
                .then(Mono.defer(() -> groups.submitForCommands(incarnationId, commandIds, leases -> {
                    Map<UUID, UUID> byCommand = leasesOf(incarnationId, commandIds, leases);
                    return pins.lock(wanted(items, byCommand, leases))
                            .map(hits -> grouped(incarnationId, items, byCommand, hits, principal.actor()));
                })))
                .map(results -> IntStream.range(0, items.size())
                        .mapToObj(i -> answer(results.get(i), items.get(i).commandId()))
                        .toList());
    }

    /** The lease of each of the incarnation's commands among {@code commandIds}, from the locked leases. */
    private static Map<UUID, UUID> leasesOf(
            UUID incarnationId, List<UUID> commandIds, Map<UUID, LeaseAggregate> leases) {
        Set<UUID> wanted = new HashSet<>(commandIds);
        Map<UUID, UUID> byCommand = new HashMap<>();
        for (LeaseAggregate lease : leases.values()) {
            for (Command c : lease.commands()) {
                if (c.incarnationId().equals(incarnationId) && wanted.contains(c.commandId())) {
                    byCommand.put(c.commandId(), lease.row().leaseId());
                }
            }
        }
        return byCommand;
    }

    /** The blocks each acknowledged PIN needs at their slots, numbered by item. */
    private static List<BlockPins.Block> wanted(
            List<LeaseRequests.AckEntry> items, Map<UUID, UUID> byCommand, Map<UUID, LeaseAggregate> leases) {
        List<BlockPins.Block> wanted = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            UUID leaseId = byCommand.get(items.get(i).commandId());
            LeaseAggregate lease = leaseId == null ? null : leases.get(leaseId);
            Command c = lease == null ? null : lease.command(items.get(i).commandId());
            if (c != null && c.type() == CommandType.PIN && items.get(i).ok()) {
                wanted.addAll(lease.row().blocks(i, c.rank()));
            }
        }
        return wanted;
    }

    private static List<ReportGroups.Grouped> grouped(
            UUID incarnationId,
            List<LeaseRequests.AckEntry> items,
            Map<UUID, UUID> byCommand,
            Map<Integer, Long> hits,
            String actor) {
        return IntStream.range(0, items.size())
                .mapToObj(i -> {
                    LeaseRequests.AckEntry item = items.get(i);
                    long blocks = hits.getOrDefault(i, 0L);
                    return new ReportGroups.Grouped(
                            byCommand.get(item.commandId()),
                            actor,
                            lease -> Mono.just(new LeaseReport.Ack(
                                    incarnationId,
                                    item.commandId(),
                                    item.ok(),
                                    item.detail(),
                                    blocks == lease.row().fetchBlocks())),
                            () -> LeaseProblems.noSuchCommand(item.commandId()));
                })
                .toList();
    }

    private static ItemResult<EngineCommand.Ack> answer(ItemResult<LeaseDecision> r, UUID commandId) {
        ItemResult<LeaseDecision> answered = ReportGroups.answer(r, d -> d);
        if (answered.error() != null) {
            return ItemResult.failed(answered.error());
        }
        LeaseDecision d = answered.orThrow();
        UUID leaseId = d.after().row().leaseId();
        Command c = d.after().command(commandId);
        return c == null
                ? ItemResult.failed(LeaseProblems.noSuchLease(leaseId))
                : ItemResult.ok(new EngineCommand.Ack(
                        c.commandId(), c.type().name(), leaseId, d.state(), d.held(), d.duplicate()));
    }
}
