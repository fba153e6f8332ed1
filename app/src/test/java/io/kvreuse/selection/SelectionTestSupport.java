package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A same-host donor/target pair with a published bank, and helpers to ask for donors. */
final class SelectionTestSupport {

    static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};

    final WebTestClient http;
    final Fleet fleet;
    final InventoryFeed inventory;
    final FleetDirectory directory;
    final DatabaseClient db;
    final String router;

    SelectionTestSupport(
            WebTestClient http,
            Fleet fleet,
            InventoryFeed inventory,
            FleetDirectory directory,
            DatabaseClient db,
            String router) {
        this.http = http;
        this.fleet = fleet;
        this.inventory = inventory;
        this.directory = directory;
        this.db = db;
        this.router = router;
    }

    /** A donor with a published bank holding {@code chain} at slots 0.., and its domain. */
    record Donor(Engine engine, String bankId, long[] chain, long[] nextEvents) {}

    Donor donor(String domain, int tp, String host, long[] chain) {
        return donor(domain, tp, host, chain, Math.max(chain.length, 16) + 64);
    }

    Donor donor(String domain, int tp, String host, long[] chain, int capacity) {
        Engine decode = fleet.ready("DECODE", domain, tp, host);
        String bankId = fleet.bank(decode, tp, capacity);
        long[] next = new long[tp];
        Arrays.fill(next, 1);
        if (chain.length > 0) {
            fleet.storeChain(decode, bankId, tp, chain, 0, next);
        }
        awaitIndexed(bankId);
        awaitDirectory(decode.id());
        awaitDomain(domain);
        return new Donor(decode, bankId, chain, next);
    }

    Engine target(String domain, int tp, String host) {
        Engine prefill = fleet.ready("PREFILL", domain, tp, host);
        awaitDirectory(prefill.id());
        awaitDomain(domain);
        return prefill;
    }

    /**
     * Waits until the directory holds the domain as certified: its notification is reloaded on its
     * own, and may land after those of incarnations registered later.
     */
    void awaitDomain(String domainId) {
        await(
                () -> directory.domain(domainId) != null
                        && directory.domain(domainId).certified(),
                "domain " + domainId + " certified in the directory");
    }

    void awaitIndexed(String bankId) {
        UUID id = UUID.fromString(bankId);
        long stored = db.sql("SELECT feed_seq FROM retained_bank WHERE bank_id = :b")
                .bind("b", id)
                .map((row, meta) -> row.get("feed_seq", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        await(() -> inventory.appliedSeq(id) >= stored, "bank " + bankId + " indexed through " + stored);
    }

    void awaitDirectory(String incarnationId) {
        UUID id = UUID.fromString(incarnationId);
        String state = db.sql("SELECT state FROM engine_incarnation WHERE incarnation_id = :i")
                .bind("i", id)
                .map((row, meta) -> row.get("state", String.class))
                .one()
                .block(Duration.ofSeconds(5));
        await(
                () -> {
                    FleetDirectory.Incarnation i = directory.incarnation(id);
                    return i != null && i.state().name().equals(state);
                },
                "directory sees " + incarnationId + " " + state);
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    Map<String, Object> select(String targetId, long[] chain, int local) {
        return select(targetId, chain, local, null, null);
    }

    Map<String, Object> select(String targetId, long[] chain, int local, String lineage, Integer deadlineMs) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("requestId", "req-" + UUID.randomUUID());
        body.put("targetIncarnationId", targetId);
        body.put(
                "seqHashes",
                Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList());
        body.put("localPrefixBlocks", local);
        if (lineage != null) {
            body.put("mmLineage", lineage);
        }
        // generous unless the test is about the deadline: CI machines are shared
        body.put("deadlineMs", deadlineMs != null ? deadlineMs : 10_000);
        return http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(JSON)
                .returnResult()
                .getResponseBody();
    }

    static void assertNoHint(Map<String, Object> response, NoHintReason reason) {
        assertThat(response)
                .as(response.toString())
                .containsEntry("decision", "NO_HINT")
                .containsEntry("reason", reason.name());
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> payload(Map<String, Object> response) {
        assertThat(response).as(response.toString()).containsEntry("decision", "HINT");
        Map<String, Object> hint = (Map<String, Object>) response.get("hint");
        List<Map<String, Object>> actions = (List<Map<String, Object>>) hint.get("actions");
        assertThat(actions).hasSize(1);
        return (Map<String, Object>) actions.getFirst().get("payload");
    }

    static long[] concat(long[] a, long[] b) {
        long[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
