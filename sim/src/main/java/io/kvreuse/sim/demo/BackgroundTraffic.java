package io.kvreuse.sim.demo;

import io.kvreuse.sim.Conversation;
import io.kvreuse.sim.SimHttp;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

/** After the report with {@code --keep-running}: a new conversation every few seconds, one line each. */
final class BackgroundTraffic {

    private static final long PAUSE_MS = 3_000;

    private final DemoFleet fleet;
    private final SimHttp router;
    private final Operator operator;
    private final PrintStream out;

    BackgroundTraffic(DemoFleet fleet, SimHttp router, Operator operator, PrintStream out) {
        this.fleet = fleet;
        this.router = router;
        this.operator = operator;
        this.out = out;
    }

    void serveUntil(BooleanSupplier stopping) {
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        ServingRun run = new ServingRun("BG", fleet, router, operator, quiet);
        for (int n = 1; !stopping.getAsBoolean(); n++) {
            try {
                List<TurnResult> rows = run.serve("conversation-" + n, conversation(n));
                Report.Totals t = Report.Totals.of(rows);
                out.printf(
                        "  conversation-%d: %d turns, prompt tokens %d, computed %d, reused %d, failures %d%n",
                        n, t.requests(), t.promptTokens(), t.computedTokens(), t.reusedTokens(), t.failures());
                Thread.sleep(PAUSE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                if (stopping.getAsBoolean()) {
                    return;
                }
                out.println("  conversation-" + n + " failed: " + e.getMessage());
            }
        }
    }

    /** Two to four turns of varied length, seeded by the conversation's number. */
    private static Conversation conversation(int n) {
        SplittableRandom random = new SplittableRandom(1_000 + n);
        int turns = random.nextInt(2, 5);
        List<Conversation.Turn> list = java.util.stream.IntStream.range(0, turns)
                .mapToObj(i -> new Conversation.Turn(random.nextInt(8, 120), random.nextInt(60, 200)))
                .toList();
        return new Conversation(1_000L + n, 16, list);
    }
}
