package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Parties;
import io.kvreuse.protocol.PartState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The move table: equal to the one in docs/design.md, and every row made by the decider as the table says. */
class LeaseMoveTests {

    private static final Pattern ROW =
            Pattern.compile("^\\|\\s*([A-Z_]+)\\s*\\|\\s*([A-Z_]+)\\s*\\|\\s*([A-Z_]+)\\s*\\|.*\\|\\s*$");

    @Test
    void designDocumentListsExactlyTheMovesOfTheTable() throws IOException {
        Set<String> documented = documentedMoves();
        Set<String> table = Arrays.stream(LeaseMove.values())
                .map(m -> m.from + " " + m.on + " " + m.to)
                .collect(Collectors.toSet());
        assertThat(documented).hasSize(LeaseMove.values().length).isEqualTo(table);
    }

    @Test
    void designDiagramNamesEveryStateOfTheTable() throws IOException {
        String leases = leasesSection();
        String diagram = leases.substring(leases.indexOf("```") + 3, leases.indexOf("```", leases.indexOf("```") + 3));
        for (LeaseState state : LeaseState.values()) {
            assertThat(diagram).as("the diagram shows %s", state).contains(state.name());
        }
        assertThat(diagram).doesNotContain("DELIVERED → RELEASING").doesNotContain("UNCERTAIN → RELEASING");
    }

    @Test
    void designDocumentListsExactlyTheOutcomes() throws IOException {
        String leases = leasesSection();
        String table = leases.substring(leases.indexOf("| outcome | set by |"));
        Set<String> documented = table.lines()
                .takeWhile(l -> l.startsWith("|"))
                .map(l -> Pattern.compile("^\\|\\s*`([A-Z_]+)`").matcher(l))
                .filter(Matcher::find)
                .map(m -> m.group(1))
                .collect(Collectors.toSet());
        assertThat(documented)
                .isEqualTo(Arrays.stream(LeaseOutcome.values()).map(Enum::name).collect(Collectors.toSet()));
    }

    @Test
    void onlyTheTerminalStatesHaveNoMoves() {
        for (LeaseState state : LeaseState.values()) {
            assertThat(LeaseMove.next(state).isEmpty()).as(state.name()).isEqualTo(state.isTerminal());
        }
        assertThat(LeaseMove.next(LeaseState.UNCERTAIN)).containsExactly(LeaseState.FAILED);
        assertThat(Arrays.stream(LeaseMove.values()).filter(m -> m.to == LeaseState.RELEASED))
                .extracting(m -> m.from)
                .containsOnly(LeaseState.RELEASING);
    }

    @Test
    void oneMovePerStateAndTrigger() {
        for (LeaseMove m : LeaseMove.values()) {
            assertThat(LeaseMove.of(m.from, m.on)).contains(m);
        }
        assertThat(LeaseMove.of(LeaseState.UNCERTAIN, LeaseMove.Trigger.TRANSFER_DEADLINE))
                .isEmpty();
        assertThat(LeaseMove.of(LeaseState.FAILED, LeaseMove.Trigger.PARTS_DONE))
                .isEmpty();
    }

    @ParameterizedTest
    @EnumSource(LeaseMove.class)
    void theDeciderMakesEveryMoveOfTheTable(LeaseMove move) {
        LeaseFixture f = new LeaseFixture(
                move == LeaseMove.PARTLY_PINNED_EXPIRED
                                || move == LeaseMove.PARTLY_PINNED_WITHDRAWN
                                || move == LeaseMove.PART_LOST_TRACK
                        ? 2
                        : 1,
                new Random(move.ordinal()));
        LeaseDecision last = drive(f, move);
        List<LeaseMove> made = moves(last);
        assertThat(made).as("moves of the last report").contains(move);
        long version = 1;
        for (LeaseDecision d : f.decisions) {
            version += moves(d).size();
            assertThat(d.after().row().version()).as("one version per move").isEqualTo(version);
        }
        assertThat(f.decisions.stream().flatMap(d -> moves(d).stream()))
                .as("no other move than the table's")
                .allMatch(m -> LeaseMove.of(m.from, m.on).isPresent());
    }

    /** Brings a fresh lease to the move's state and sends what makes the move. */
    private static LeaseDecision drive(LeaseFixture f, LeaseMove move) {
        Parties fenced = new Parties(2, 1, 1, false, LeaseFixture.PART_BYTES);
        return switch (move) {
            case PIN_HELD -> f.ack(CommandType.PIN, 0, true);
            case PIN_REFUSED, REFUSED_RELEASE -> f.ack(CommandType.PIN, 0, false);
            case PROPOSAL_EXPIRED -> tick(f, LeaseFixture.TTL);
            case PARTLY_PINNED_EXPIRED -> {
                f.ack(CommandType.PIN, 0, true);
                yield tick(f, LeaseFixture.TTL);
            }
            case PROPOSAL_ABORTED, FAILED_RELEASE -> f.report(new LeaseReport.Abort("aborted"));
            case PROPOSAL_RECLAIMED -> cleanup(f);
            case PROPOSAL_WITHDRAWN -> f.report(new LeaseReport.Withdrawn("no hint sent"));
            case PARTLY_PINNED_WITHDRAWN -> {
                f.ack(CommandType.PIN, 0, true);
                yield f.report(new LeaseReport.Withdrawn("no hint sent"));
            }
            case PINNED_WITHDRAWN -> f.pinned().report(new LeaseReport.Withdrawn("no hint sent"));
            case ORDER_CLAIMED -> f.pinned().report(new LeaseReport.OrderClaimed());
            case NEVER_TRANSFERRED -> tick(f.pinned(), LeaseFixture.TRANSFER);
            case PINNED_ABORTED -> f.pinned().report(new LeaseReport.Abort("aborted"));
            case PINNED_RECLAIMED -> cleanup(f.pinned());
            case ALL_PARTS_DONE -> f.transferring().part(0, PartState.DONE, LeaseFixture.PART_BYTES);
            case PARTS_STOPPED -> f.transferring().part(0, PartState.FAILED, 0);
            case FENCED_DURING_TRANSFER ->
                f.transferring().parties(fenced).part(0, PartState.DONE, LeaseFixture.PART_BYTES);
            case PART_LOST_TRACK -> f.transferring().part(0, PartState.UNCERTAIN, 10);
            case TRANSFER_DEADLINE -> tick(f.transferring(), LeaseFixture.TRANSFER);
            case TRANSFER_ABORTED -> f.transferring().report(new LeaseReport.Abort("aborted"));
            case ENGINES_QUIESCED -> quiesce(f.transferring(), LeaseReport.Witness.ENGINE);
            case TRANSFER_QUIESCED -> quiesce(f.transferring(), LeaseReport.Witness.AGENT);
            case TRANSFER_RECLAIMED -> cleanup(f.transferring());
            case DELIVERY_COMMITTED, COMMITTED_RELEASE -> f.delivered().report(new LeaseReport.Commit(3));
            case DELIVERY_ABORTED -> f.delivered().report(new LeaseReport.Abort("aborted"));
            case DELIVERY_ABANDONED -> tick(f.delivered(), LeaseFixture.ABANDON);
            case DELIVERY_RECLAIMED -> cleanup(f.delivered());
            case UNCERTAIN_STOPPED -> f.uncertain().part(0, PartState.DONE, LeaseFixture.PART_BYTES);
            case UNCERTAIN_QUIESCED -> quiesce(f.uncertain(), LeaseReport.Witness.OPERATOR);
            case UNCERTAIN_RECLAIMED -> cleanup(f.uncertain());
            case HOLDS_RELEASED -> {
                f.pinned().report(new LeaseReport.Abort("aborted"));
                f.ack(CommandType.UNPIN, 0, true);
                yield f.ack(CommandType.RELEASE, -1, true);
            }
        };
    }

    private static LeaseDecision tick(LeaseFixture f, Duration after) {
        f.tick(after.plusMillis(1));
        return f.decisions.getLast();
    }

    private static LeaseDecision cleanup(LeaseFixture f) {
        return f.report(new LeaseReport.Cleanup(f.row().donorId(), "donor gone"));
    }

    private static LeaseDecision quiesce(LeaseFixture f, LeaseReport.Witness witness) {
        f.report(new LeaseReport.Quiesced(true, witness, "stopped"));
        return f.report(new LeaseReport.Quiesced(false, witness, "stopped"));
    }

    static List<LeaseMove> moves(LeaseDecision d) {
        return d.signals().stream()
                .filter(s -> s instanceof LeaseDecision.Signal.Transition)
                .map(s -> ((LeaseDecision.Signal.Transition) s).move())
                .toList();
    }

    private static Set<String> documentedMoves() throws IOException {
        return leasesSection()
                .lines()
                .map(ROW::matcher)
                .filter(Matcher::matches)
                .map(m -> m.group(1) + " " + m.group(2) + " " + m.group(3))
                .collect(Collectors.toSet());
    }

    private static String leasesSection() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        String design = Files.readString(dir.resolve("docs/design.md"));
        int start = design.indexOf("### Leases");
        return design.substring(start, design.indexOf("\n### ", start + 1));
    }
}
