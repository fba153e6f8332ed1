package io.kvreuse.system;

import io.kvreuse.sim.SimEngineException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import tools.jackson.databind.JsonNode;

/**
 * Asks every replica the same donor questions about the conversations of a fleet (all of them, or
 * a random sample of {@link SystemFleet.Size#comparedConversations()}) — the whole
 * chain, half of it, the chain past a local prefix, an unknown chain) and compares what their
 * in-memory indexes and fleet directories answered: decision, reason, donor and its epoch, bank and
 * its epoch, target epoch, fetched blocks and slots. Hints are handed to their targets, so the
 * probes end as ordinary lease lifecycles.
 */
final class ReplicaAnswers {

    /** What one replica answered, without the per-call parts (lease and message ids, deadlines). */
    record Answer(
            String decision, String reason, String donor, String bank, String epochs, int fetchBlocks, String blocks) {

        static Answer of(io.kvreuse.testkit.Answer r) {
            if (r.status() != 200) {
                return new Answer("HTTP " + r.status(), r.body(), "", "", "", 0, "");
            }
            JsonNode a = r.json();
            if (!a.path("decision").asString().equals("HINT")) {
                return new Answer(
                        a.path("decision").asString(), a.path("reason").asString(), "", "", "", 0, "");
            }
            JsonNode p = a.path("hint").path("actions").get(0).path("payload");
            return new Answer(
                    "HINT",
                    "",
                    p.path("source").path("incarnation_id").asString(),
                    p.path("source").path("bank_id").asString(),
                    p.path("source").path("fencing_epoch").asLong() + "/"
                            + p.path("source").path("bank_epoch").asLong() + "/"
                            + p.path("target").path("fencing_epoch").asLong(),
                    p.path("fetch_blocks").asInt(),
                    p.path("block_hashes") + " " + p.path("source_slot_runs"));
        }
    }

    /** The outcome: questions asked, hints each replica gave, and every question the replicas answered differently. */
    record Comparison(int questions, int hints, List<String> mismatches, List<String> unexpected) {}

    private ReplicaAnswers() {}

    static Comparison compare(SystemFleet fleet) throws Exception {
        Random random = new Random();
        List<String> mismatches = new ArrayList<>();
        List<String> unexpected = new ArrayList<>();
        int questions = 0;
        int hints = 0;
        List<SystemFleet.Conversation> sample = new ArrayList<>(fleet.conversations);
        java.util.Collections.shuffle(sample, random);
        for (SystemFleet.Conversation c :
                sample.subList(0, Math.min(sample.size(), fleet.size.comparedConversations()))) {
            int n = c.chain().length;
            long[][] chains = {
                c.chain(),
                Arrays.copyOf(c.chain(), n / 2),
                c.chain(),
                random.longs(n).toArray()
            };
            int[] local = {0, 0, 2, 0};
            int[] expected = {n, n / 2, n - 2, 0};
            for (int q = 0; q < chains.length; q++) {
                awaitDonorBelow(fleet, c, 16);
                Answer[] answers = new Answer[fleet.replicas.size()];
                for (int r = 0; r < answers.length; r++) {
                    io.kvreuse.testkit.Answer response = fleet.api(r)
                            .post("/api/v1/donor-selections", fleet.router, question(c, chains[q], local[q], random));
                    answers[r] = Answer.of(response);
                    if (answers[r].decision().equals("HINT")) {
                        hints++;
                        hand(c, response);
                    }
                }
                questions++;
                for (int r = 1; r < answers.length; r++) {
                    if (!answers[r].equals(answers[0])) {
                        mismatches.add("conversation of " + c.donor().id() + " question " + q + ": replica 0 "
                                + answers[0] + " vs replica " + r + " " + answers[r]);
                    }
                }
                boolean ok = expected[q] == 0
                        ? answers[0].reason().equals("NO_COVERAGE")
                        : answers[0].decision().equals("HINT")
                                && answers[0].fetchBlocks() == expected[q]
                                && answers[0].donor().equals(c.donor().id());
                if (!ok) {
                    unexpected.add("conversation of " + c.donor().id() + " question " + q + " expected " + expected[q]
                            + " blocks: " + answers[0]);
                }
            }
        }
        return new Comparison(questions, hints, mismatches, unexpected);
    }

    private static Map<String, Object> question(SystemFleet.Conversation c, long[] chain, int local, Random random) {
        List<String> hashes = new ArrayList<>();
        for (long h : chain) {
            hashes.add(Long.toUnsignedString(h));
        }
        hashes.add(Long.toUnsignedString(random.nextLong()));
        return Map.of(
                "requestId",
                "probe-" + UUID.randomUUID(),
                "targetIncarnationId",
                c.target().id(),
                "seqHashes",
                hashes,
                "localPrefixBlocks",
                local,
                "deadlineMs",
                1_000);
    }

    private static void hand(SystemFleet.Conversation c, io.kvreuse.testkit.Answer hint) {
        try {
            c.target().fetch(hint.json().get("hint"));
        } catch (SimEngineException e) {
            // the lease expires unpinned; the comparison is about the answers
        }
    }

    /** Keeps the donor and target well below their in-flight caps, so that caps never decide an answer. */
    private static void awaitDonorBelow(SystemFleet fleet, SystemFleet.Conversation c, int inflight) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String sql = """
                SELECT count(*) FROM lease WHERE (donor_incarnation_id = '%s' OR target_incarnation_id = '%s')
                AND state IN ('PROPOSED', 'SOURCE_PINNED', 'TRANSFERRING', 'DELIVERED', 'UNCERTAIN', 'RELEASING')""".formatted(c.donor().id(), c.target().id());
        while (fleet.scalar(sql) >= inflight && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }
}
