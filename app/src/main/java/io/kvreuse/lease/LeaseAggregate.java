package io.kvreuse.lease;

import io.kvreuse.protocol.PartState;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One lease as the decider sees it, read under the lease's row lock: the row, its per-rank pins and
 * destination allocations, its engine commands, its transfer order with the parts, and the parties
 * as they are now. Plain data: the decider reads it and answers the next one.
 */
record LeaseAggregate(
        LeaseRow row,
        int tp,
        List<Pin> pins,
        List<Destination> destinations,
        List<Command> commands,
        @Nullable Order order,
        Parties parties) {

    LeaseAggregate {
        pins = List.copyOf(pins);
        destinations = List.copyOf(destinations);
        commands = List.copyOf(commands);
    }

    /** A pin's or a destination allocation's state; it leaves HELD only through RELEASING. */
    enum HoldState {
        HELD,
        RELEASING,
        RELEASED
    }

    enum CommandType {
        PIN,
        UNPIN,
        DELIVERED,
        RELEASE
    }

    /** OPEN until the engine acknowledges it (ACKED, or REFUSED for a PIN it did not hold) or kvreuse withdraws it. */
    enum CommandState {
        OPEN,
        ACKED,
        REFUSED,
        WITHDRAWN
    }

    /** A transfer order's state; the agent's claim moves it from QUEUED to CLAIMED. */
    enum OrderState {
        QUEUED,
        CLAIMED,
        DONE,
        FAILED,
        UNCERTAIN,
        QUIESCED
    }

    /** One source rank's pin on the donor's bank. */
    record Pin(int rank, HoldState state) {}

    record Destination(int rank, String regionRef, int[][] runs, HoldState state) {}

    /** An engine command; rank -1 for the target's DELIVERED and RELEASE. */
    record Command(UUID commandId, UUID incarnationId, CommandType type, int rank, CommandState state) {

        /** The id kvreuse gives the command it issues: one command per (lease, type, rank). */
        static UUID idFor(UUID leaseId, CommandType type, int rank) {
            return UUID.nameUUIDFromBytes(
                    ("command/" + leaseId + "/" + type + "/" + rank).getBytes(StandardCharsets.UTF_8));
        }
    }

    record Order(UUID orderId, OrderState state, Map<Integer, Part> parts) {

        Order {
            parts = Map.copyOf(parts);
        }

        static UUID idFor(UUID leaseId) {
            return UUID.nameUUIDFromBytes(("order/" + leaseId).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** One rank's part of the transfer as last reported. */
    record Part(int rank, PartState state, long bytes, long bytesMoved, long durationUs) {

        boolean complete() {
            return state == PartState.DONE && bytesMoved == bytes;
        }
    }

    /**
     * The parties now: the donor's, target's and bank's current epochs, whether the bank was
     * dropped, the bytes one rank's part of the transfer moves, and the subjects owning the donor
     * and the target (what {@link PartyChecks} checks a reporter against; the decider needs none).
     */
    record Parties(
            long donorEpoch,
            long targetEpoch,
            long bankEpoch,
            boolean bankDropped,
            long partBytes,
            @Nullable String donorOwner,
            @Nullable String targetOwner) {

        Parties(long donorEpoch, long targetEpoch, long bankEpoch, boolean bankDropped, long partBytes) {
            this(donorEpoch, targetEpoch, bankEpoch, bankDropped, partBytes, null, null);
        }
    }

    /** Whether the donor and the target are still at the epochs the lease was made under. */
    boolean partiesCurrent() {
        return parties.donorEpoch() == row.donorEpoch() && parties.targetEpoch() == row.targetEpoch();
    }

    /** Whether some pin or allocation is held or being released. */
    boolean holdsAnything() {
        return pins.stream().anyMatch(p -> p.state() != HoldState.RELEASED)
                || destinations.stream().anyMatch(d -> d.state() != HoldState.RELEASED);
    }

    @Nullable
    Command command(UUID commandId) {
        return commands.stream()
                .filter(c -> c.commandId().equals(commandId))
                .findFirst()
                .orElse(null);
    }
}
