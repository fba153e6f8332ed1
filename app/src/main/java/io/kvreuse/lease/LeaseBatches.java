package io.kvreuse.lease;

import io.kvreuse.domain.TransferCalibration;
import io.kvreuse.region.DestinationRegions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The common path of lease reports, for a whole batch at once: every lease of the batch is locked
 * (in id order) and read with its holds in a few statements, each item is decided in memory, and
 * the changes are written with one set-based statement per kind ({@link BatchChanges}). Only the
 * everyday case of each report is decided here — a PIN that holds, an UNPIN that releases, a
 * destination on a fresh lease, a part that runs or completes, a commit of a delivery. Every other
 * item (a refusal, a stale epoch, a duplicate, a failure) is left {@code null}: the caller runs it
 * through the single-report path after this batch committed, so it means exactly what it always
 * did. Once an item of a lease is left, the later items of that lease are left too, keeping their
 * order.
 *
 * <p>Call inside a transaction; the caller counts the metrics with {@link #committed}.
 */
@Service
class LeaseBatches {

    private final BatchStore store;
    private final OrderWriter orders;
    private final LeaseStore leases;
    private final TransferCalibration calibration;
    private final LeaseMetrics metrics;
    private final Clock clock;
    private final DestinationRegions regions;

    LeaseBatches(
            BatchStore store,
            OrderWriter orders,
            LeaseStore leases,
            TransferCalibration calibration,
            LeaseMetrics metrics,
            Clock clock,
            DestinationRegions regions) {
        this.regions = regions;
        this.store = store;
        this.orders = orders;
        this.leases = leases;
        this.calibration = calibration;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Per item: its result, or null when the single-report path must decide it. */
    record Decided<T>(List<@Nullable T> results, BatchChanges changes, Runnable afterCommit) {}

    /**
     * Counts the batch's transitions and the item-specific metrics. The batch endpoints call it once
     * their transaction committed; the order paths call it inside theirs, as the single-report path
     * counts its moves.
     */
    void committed(Decided<?> d) {
        for (BatchChanges.Lease l : d.changes().leases.values()) {
            l.transitions.forEach(metrics::transition);
        }
        d.afterCommit().run();
    }

    private Mono<BatchChanges> open(Collection<UUID> leaseIds) {
        return open(leaseIds.isEmpty() ? Flux.empty() : store.lock(leaseIds));
    }

    /** Collects the leases {@code locking} locks, with their pins and destinations. */
    private Mono<BatchChanges> open(Flux<LeaseRow> locking) {
        BatchChanges changes = new BatchChanges(store, orders, clock.instant());
        return locking.collectList().flatMap(rows -> {
            if (rows.isEmpty()) {
                return Mono.just(changes);
            }
            List<UUID> leaseIds = rows.stream().map(LeaseRow::leaseId).toList();
            return Mono.zip(
                            store.pins(leaseIds).collectList(),
                            store.destinations(leaseIds).collectList())
                    .map(t -> {
                        Map<UUID, List<HoldStore.Pin>> pins = t.getT1().stream()
                                .collect(Collectors.groupingBy(
                                        BatchStore.LeasePin::leaseId,
                                        Collectors.mapping(BatchStore.LeasePin::pin, Collectors.toList())));
                        Map<UUID, List<HoldStore.Destination>> dests = t.getT2().stream()
                                .collect(Collectors.groupingBy(
                                        BatchStore.LeaseDestination::leaseId,
                                        Collectors.mapping(
                                                BatchStore.LeaseDestination::destination, Collectors.toList())));
                        for (LeaseRow row : rows) {
                            changes.add(
                                    row,
                                    pins.getOrDefault(row.leaseId(), List.of()),
                                    dests.getOrDefault(row.leaseId(), List.of()));
                        }
                        return changes;
                    });
        });
    }

    private Mono<Map<String, Integer>> tps(BatchChanges changes) {
        return Flux.fromIterable(changes.leases.values().stream()
                        .map(l -> l.row.domainId())
                        .collect(Collectors.toSet()))
                .concatMap(d -> leases.tp(d).map(tp -> Map.entry(d, tp)))
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    // ---- orders and their parts -----------------------------------------------------------------

    /** Claimed orders' leases move SOURCE_PINNED → TRANSFERRING; answers each lease's state. */
    Mono<Decided<LeaseState>> ordersClaimed(List<UUID> leaseIds, String actor) {
        return open(new LinkedHashSet<>(leaseIds)).flatMap(changes -> {
            List<LeaseState> results = new ArrayList<>();
            for (UUID id : leaseIds) {
                BatchChanges.Lease l = changes.leases.get(id);
                if (l != null && l.row.state() == LeaseState.SOURCE_PINNED) {
                    changes.move(l, LeaseState.TRANSFERRING, actor, null, null);
                }
                results.add(l == null ? null : l.row.state());
            }
            return changes.apply().thenReturn(new Decided<>(results, changes, () -> {}));
        });
    }

    /** One part report of a batch, for an order the caller already checked the agent may report on. */
    record PartItem(UUID orderId, UUID leaseId, int rank, BatchStore.PartUpdate update) {}

    private static final Set<String> FINAL = Set.of("DONE", "FAILED", "QUIESCED");

    /**
     * Part reports: RUNNING and DONE on a TRANSFERRING lease are decided here; a lease whose every
     * part is then DONE for the full range, under unchanged donor, target and bank epochs, is
     * DELIVERED (its target told with a DELIVERED command). Every other report — a failure, an
     * uncertain or quiesced part, a report on a final part, a changed epoch — is left, with the
     * other reports of its lease.
     */
    Mono<Decided<LeaseState>> parts(List<PartItem> items, String actor) {
        Set<UUID> ids = items.stream().map(PartItem::leaseId).collect(Collectors.toCollection(LinkedHashSet::new));
        return open(ids).flatMap(changes -> {
            Set<UUID> banks =
                    changes.leases.values().stream().map(l -> l.row.bankId()).collect(Collectors.toSet());
            return Mono.zip(store.parts(ids).collectList(), store.epochs(parties(changes)), store.banksForPin(banks))
                    .flatMap(t -> {
                        Map<UUID, Map<Integer, BatchStore.StoredPart>> parts = new HashMap<>();
                        for (BatchStore.StoredPart p : t.getT1()) {
                            parts.computeIfAbsent(p.leaseId(), k -> new LinkedHashMap<>())
                                    .put(p.rank(), p);
                        }
                        Map<UUID, List<Integer>> byLease = new LinkedHashMap<>();
                        for (int i = 0; i < items.size(); i++) {
                            byLease.computeIfAbsent(items.get(i).leaseId(), k -> new ArrayList<>())
                                    .add(i);
                        }
                        List<LeaseState> results = new ArrayList<>(java.util.Collections.nCopies(items.size(), null));
                        List<Runnable> after = new ArrayList<>();
                        byLease.forEach((leaseId, indexes) -> {
                            BatchChanges.Lease l = changes.leases.get(leaseId);
                            Map<Integer, BatchStore.StoredPart> now = parts.get(leaseId);
                            if (l == null || now == null || l.row.state() != LeaseState.TRANSFERRING) {
                                return;
                            }
                            Map<Integer, BatchStore.StoredPart> next = new LinkedHashMap<>(now);
                            for (int i : indexes) {
                                PartItem item = items.get(i);
                                BatchStore.StoredPart part = next.get(item.rank());
                                String state = item.update().state();
                                if (part == null
                                        || !part.orderId().equals(item.orderId())
                                        || FINAL.contains(part.state())
                                        || !(state.equals("RUNNING") || state.equals("DONE"))
                                        || item.update().bytes() > part.bytes()) {
                                    return;
                                }
                                next.put(
                                        item.rank(),
                                        new BatchStore.StoredPart(
                                                part.orderId(),
                                                leaseId,
                                                part.rank(),
                                                state,
                                                part.bytes(),
                                                item.update().bytes(),
                                                item.update().durationUs()));
                            }
                            boolean complete = next.values().stream()
                                    .allMatch(p -> p.state().equals("DONE") && p.bytesMoved() == p.bytes());
                            boolean unchanged = next.values().stream()
                                    .noneMatch(p -> p.state().equals("UNCERTAIN")
                                            || p.state().equals("FAILED")
                                            || p.state().equals("QUIESCED"));
                            boolean allStopped = next.values().stream().allMatch(p -> FINAL.contains(p.state()));
                            if (complete) {
                                LeaseStore.BankNow bank = t.getT3().get(l.row.bankId());
                                if (!current(l.row, t.getT2()) || bank == null || bank.epoch() != l.row.bankEpoch()) {
                                    return;
                                }
                            } else if (!unchanged || allStopped) {
                                return;
                            }
                            for (int i : indexes) {
                                changes.part(items.get(i).update());
                            }
                            if (complete) {
                                long bytesPerRank =
                                        next.values().iterator().next().bytes();
                                double realisedMs = next.values().stream()
                                                .mapToLong(BatchStore.StoredPart::durationUs)
                                                .max()
                                                .orElse(0)
                                        / 1000.0;
                                changes.move(l, LeaseState.DELIVERED, actor, null, null);
                                changes.orderState(leaseId, "DONE");
                                changes.command(l.row.targetId(), leaseId, "DELIVERED", -1);
                                LeaseRow row = l.row;
                                after.add(() -> {
                                    metrics.delivered(row.predictedTransferMs(), realisedMs);
                                    calibration.sample(row.domainId(), row.transportClass(), bytesPerRank, realisedMs);
                                });
                            }
                            for (int i : indexes) {
                                results.set(i, l.row.state());
                            }
                        });
                        return changes.apply()
                                .thenReturn(new Decided<>(results, changes, () -> after.forEach(Runnable::run)));
                    });
        });
    }

    private static Set<UUID> parties(BatchChanges changes) {
        Set<UUID> ids = new HashSet<>();
        for (BatchChanges.Lease l : changes.leases.values()) {
            ids.add(l.row.donorId());
            ids.add(l.row.targetId());
        }
        return ids;
    }

    /** Whether the lease's donor and target are still at the epochs it was made under. */
    private static boolean current(LeaseRow row, Map<UUID, Long> epochs) {
        return Objects.equals(epochs.get(row.donorId()), row.donorEpoch())
                && Objects.equals(epochs.get(row.targetId()), row.targetEpoch());
    }
}
