package io.kvreuse.agent.kvevents;

import static io.kvreuse.agent.kvevents.KvEventPayloads.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.ReuseSettingsFixture;
import io.kvreuse.support.TestTokens;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The agent's bridge with real ZMQ sockets (a test publisher with PUB + ROUTER replay built from the
 * format descriptions) into a real control plane and PostgreSQL.
 */
@IntegrationTest
@ExtendWith(OutputCaptureExtension.class)
class KvEventBridgeIntegrationTests {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @LocalServerPort
    int port;

    Fleet fleet;
    String host;
    String agentToken;
    SimpleMeterRegistry registry;
    final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void setUp() {
        fleet = new Fleet(http, tokens);
        host = Fleet.host();
        agentToken = tokens.mint(Role.AGENT, "agent-" + host, host);
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
    }

    private record Bank(Engine decode, String bankId, List<TestPublisher> publishers) {}

    private Bank bank(int tp, String format, String clearPolicy, int capacity) {
        String domain = fleet.domain(tp, "GPU_CUDA_IPC");
        Engine decode = fleet.ready("DECODE", domain, tp, host);
        String bankId = fleet.bank(decode, tp, capacity);
        List<TestPublisher> publishers = new ArrayList<>();
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            TestPublisher p = new TestPublisher("kv@" + r, format.equals("VLLM_KV_EVENTS") ? 0 : 1);
            closing.add(p);
            publishers.add(p);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("rank", r);
            s.put("endpoint", p.endpoint());
            s.put("replayEndpoint", p.replayEndpoint());
            s.put("topic", "kv@" + r);
            ranks.add(s);
        }
        http.put()
                .uri("/api/v1/banks/" + bankId + "/event-source")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("format", format, "allBlocksCleared", clearPolicy, "ranks", ranks))
                .exchange()
                .expectStatus()
                .isOk();
        return new Bank(decode, bankId, publishers);
    }

    private KvEventBridge bridge() throws Exception {
        return bridge(feed());
    }

    private InventoryFeed feed() {
        return new HttpInventoryFeed(URI.create("http://127.0.0.1:" + port), agentToken, host);
    }

    private KvEventBridge bridge(InventoryFeed feed) throws Exception {
        KvEventBridge bridge = new KvEventBridge(feed, registry, Duration.ofMillis(200), Duration.ofMillis(50));
        closing.add(bridge);
        bridge.refresh();
        bridge.start();
        return bridge;
    }

    /**
     * A bridge whose streams of the bank are listening: each subscription reached its publisher (a
     * batch sent before would never reach it: ZMQ's slow joiner) and each stream's catch-up replay
     * was answered (until then a batch published reaches the stream through the catch-up, and a gap
     * made then is no gap to it). Batches published after this arrive live, in order.
     */
    private KvEventBridge listening(Bank bank) throws Exception {
        return listening(bank, feed());
    }

    private KvEventBridge listening(Bank bank, InventoryFeed feed) throws Exception {
        List<Integer> marks =
                bank.publishers().stream().map(TestPublisher::replaysAnswered).toList();
        KvEventBridge bridge = bridge(feed);
        for (int r = 0; r < marks.size(); r++) {
            bank.publishers().get(r).awaitNewSubscription();
            bank.publishers().get(r).awaitReplayAnsweredAfter(marks.get(r));
        }
        return bridge;
    }

    @Test
    void bothVllmEncodingsReachTheBankAndDonorSelection() throws Exception {
        ReuseSettingsFixture settings = new ReuseSettingsFixture(http, tokens.operator());
        settings.apply(ReuseSettingsFixture::permissive);
        closing.add(settings::restore);
        Bank bank = bank(2, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        listening(bank);
        long[] chain = Fleet.chain(32);
        List<Object> hashes = u64(chain);
        // rank 0 speaks the older positional encoding, rank 1 the newer maps
        bank.publishers().get(0).publish(vllmArrayBatch(List.of(storedArray(hashes, null, 0)), 0));
        bank.publishers().get(1).publish(vllmMapBatch(List.of(storedMap(hashes, null, 0, "GPU")), 1));
        await(() -> eligible(bank) == 32, "32 blocks eligible");
        assertThat(part(bank, 0)).containsEntry("appliedThroughEventId", 0).containsEntry("needsSnapshot", false);

        Engine prefill = fleet.ready("PREFILL", fleetDomainOf(bank), 2, host);
        String router = tokens.mint(Role.ROUTER);
        long[] request = Arrays.copyOf(chain, 40);
        for (int i = 32; i < 40; i++) {
            request[i] = Fleet.chain(1)[0];
        }
        await(
                () -> "HINT".equals(select(router, prefill.id(), request).get("decision")),
                "a hint from the bridged bank");
        Map<String, Object> answer = select(router, prefill.id(), request);
        assertThat(answer.get("decision")).isEqualTo("HINT");
        assertThat(answer.toString()).contains(bank.decode().id()).doesNotContain("NO_COVERAGE");
    }

    @Test
    void aGapIsFilledFromTheReplaySocketAndNothingIsLost() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(6);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0], chain[1]), null, 0, "GPU")), 0));
        p.withhold(vllmMapBatch(List.of(storedMap(u64(chain[2], chain[3]), chain[1], 2, "GPU")), 0));
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[4], chain[5]), chain[3], 4, "GPU")), 0));
        await(() -> blocks(bank, 0) == 6, "all six blocks, the withheld ones through replay");
        assertThat(count("gaps")).isEqualTo(1);
        assertThat(count("replayed")).isEqualTo(1);
        assertThat(count("gaps.unrecovered")).isZero();
        assertThat(positions(bank)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(part(bank, 0)).containsEntry("needsSnapshot", false);
        // the filled gap is on record, reported before the replayed events were forwarded
        assertThat(count("gaps.recorded")).isEqualTo(1);
        assertThat(audit(bank)).filteredOn("EVENT_GAP_REPLAYED"::equals).hasSize(1);
        assertThat(audit(bank)).doesNotContain("EVENT_GAP", "ENGINE_RESTART");
        assertThat(view(bank)).containsEntry("state", "PUBLISHED");
    }

    @Test
    void aReplayRequestLeftUnansweredIsAskedAgainBeforeTheGapIsGivenUp() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(6);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0], chain[1]), null, 0, "GPU")), 0));
        await(() -> blocks(bank, 0) == 2, "the first batch");
        p.leaveReplaysUnanswered(1);
        p.withhold(vllmMapBatch(List.of(storedMap(u64(chain[2], chain[3]), chain[1], 2, "GPU")), 0));
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[4], chain[5]), chain[3], 4, "GPU")), 0));
        await(() -> blocks(bank, 0) == 6, "all six blocks, through the second replay request");
        assertThat(count("gaps")).isEqualTo(1);
        assertThat(count("gaps.unrecovered")).isZero();
        assertThat(positions(bank)).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(part(bank, 0)).containsEntry("needsSnapshot", false);
        assertThat(audit(bank)).filteredOn("EVENT_GAP_REPLAYED"::equals).hasSize(1);
        assertThat(audit(bank)).doesNotContain("EVENT_GAP", "ENGINE_RESTART");
    }

    @Test
    void aRestartedAgentDoesNotAuditAReplayedGapAgain() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        KvEventBridge first = listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(8);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0], chain[1]), null, 0, "GPU")), 0));
        p.withhold(vllmMapBatch(List.of(storedMap(u64(chain[2], chain[3]), chain[1], 2, "GPU")), 0));
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[4], chain[5]), chain[3], 4, "GPU")), 0));
        await(() -> blocks(bank, 0) == 6, "the gap filled from the replay socket");
        await(() -> audit(bank).contains("EVENT_GAP_REPLAYED"), "the filled gap on record");
        first.close();
        // published while no agent listens; the new agent catches up through the replay socket,
        // whose history still holds the gap's sequences: it must not report that gap a second time
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[6]), chain[5], 6, "GPU")), 0));
        listening(bank);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[7]), chain[6], 7, "GPU")), 0));
        await(() -> blocks(bank, 0) == 8, "everything applied once");
        assertThat(audit(bank)).filteredOn("EVENT_GAP_REPLAYED"::equals).hasSize(1);
        assertThat(audit(bank)).doesNotContain("EVENT_GAP", "ENGINE_RESTART");
        assertThat(part(bank, 0)).containsEntry("appliedThroughEventId", 4).containsEntry("needsSnapshot", false);
        assertThat(positions(bank)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    }

    @Test
    void anAgentRestartedWhileItsRankAwaitsASnapshotWaitsForItAndResumesBehindIt() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        KvEventBridge first = listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(5);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0]), null, 0, "GPU")), 0));
        await(() -> blocks(bank, 0) == 1, "the first block");
        p.lose(2);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[1]), chain[0], 1, "GPU")), 0));
        await(() -> Boolean.TRUE.equals(part(bank, 0).get("needsSnapshot")), "the rank needs a snapshot");
        first.close();

        // the new agent learns from the control plane that the rank awaits its snapshot: it drops the
        // rank's batches without reporting the break again
        SimpleMeterRegistry before = registry;
        registry = new SimpleMeterRegistry();
        bridge();
        await(() -> registry.get("kvreuse.agent.kv.events.streams").gauge().value() == 1, "the new agent's stream");
        // a rank that awaits its snapshot asks for no catch-up, and a batch sent before the new
        // subscriber joined never reaches it: sent again until one arrives, each dropped, not applied
        long resend = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        do {
            p.publish(vllmMapBatch(List.of(storedMap(u64(chain[2]), chain[1], 2, "GPU")), 0));
        } while (!within(Duration.ofMillis(250), () -> count("awaiting.snapshot") > 0) && System.nanoTime() < resend);
        p.subscriptionsAwaited(); // the new agent's, so that the one behind the snapshot is awaited below
        assertThat(count("awaiting.snapshot")).isPositive();
        assertThat(blocks(bank, 0)).isEqualTo(1);
        assertThat(audit(bank)).filteredOn("EVENT_GAP"::equals).hasSize(1);
        assertThat(count("gaps.unrecovered")).isZero();
        assertThat(before.counter("kvreuse.agent.kv.events.gaps.unrecovered").count())
                .isEqualTo(1);

        long resumeAt = p.nextSequence() - 1;
        snapshot(
                bank,
                0,
                List.of(block(chain[0], null, 0, 0), block(chain[1], chain[0], 1, 1), block(chain[2], chain[1], 2, 2)),
                resumeAt);
        await(() -> Boolean.FALSE.equals(part(bank, 0).get("needsSnapshot")), "snapshot applied");
        p.awaitNewSubscription(); // the bridge's next refresh resubscribes behind the snapshot's sequence
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[3], chain[4]), chain[2], 3, "GPU")), 0));
        await(() -> blocks(bank, 0) == 5, "events after the snapshot applied");
        assertThat(view(bank)).containsEntry("state", "PUBLISHED");
        assertThat(audit(bank)).filteredOn("EVENT_GAP"::equals).hasSize(1);
        assertThat(positions(bank)).containsExactly(0, 1, 2, 3, 4);
    }

    @Test
    void aBreakReportedWhileTheSourceListIsInFlightIsNotTakenForItsSnapshot() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        ListAskedBeforeTheBreak feed = new ListAskedBeforeTheBreak(feed());
        listening(bank, feed);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(4);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0]), null, 0, "GPU")), 0));
        await(() -> blocks(bank, 0) == 1, "the first block");
        // the bridge's next list is asked for before the break and answered after it is on record
        feed.holdNextList();
        assertThat(feed.held.await(20, java.util.concurrent.TimeUnit.SECONDS))
                .as("a list asked for")
                .isTrue();
        p.lose(2);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[1]), chain[0], 1, "GPU")), 0));
        await(() -> Boolean.TRUE.equals(part(bank, 0).get("needsSnapshot")), "the rank needs a snapshot");
        int lists = feed.lists.get();
        await(() -> feed.lists.get() >= lists + 2, "two more refreshes after the held list");

        // the rank still awaits its snapshot: the stream was not restarted from the stale list's position
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[2]), chain[1], 4, "GPU")), 0));
        await(() -> count("awaiting.snapshot") > 0, "the batch dropped while the rank awaits its snapshot");
        assertThat(p.subscriptions()).as("no second subscription").isEqualTo(1);
        assertThat(audit(bank)).filteredOn("EVENT_GAP"::equals).hasSize(1);
        assertThat(count("gaps")).isEqualTo(1);
        assertThat(blocks(bank, 0)).isEqualTo(1);
        assertThat(part(bank, 0)).containsEntry("needsSnapshot", true);
    }

    /**
     * The control plane's list as an agent sees it when a stream breaks while the list is on its way:
     * once armed, the next list (read before the break) is handed over only after the break is on
     * record and the stream knows it.
     */
    static final class ListAskedBeforeTheBreak implements InventoryFeed {
        final InventoryFeed real;
        final java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch broke = new java.util.concurrent.CountDownLatch(1);
        volatile boolean hold;

        ListAskedBeforeTheBreak(InventoryFeed real) {
            this.real = real;
        }

        void holdNextList() {
            hold = true;
        }

        @Override
        public List<io.kvreuse.protocol.KvEventSource> sources() throws FeedException {
            List<io.kvreuse.protocol.KvEventSource> list = real.sources();
            if (hold) {
                hold = false;
                held.countDown();
                try {
                    if (broke.await(20, java.util.concurrent.TimeUnit.SECONDS)) {
                        Thread.sleep(300); // the stream marks its break reported right after the call
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            lists.incrementAndGet();
            return list;
        }

        @Override
        public long post(UUID bankId, int rank, long firstEventId, List<byte[]> events, Long sourceSequence)
                throws FeedException {
            return real.post(bankId, rank, firstEventId, events, sourceSequence);
        }

        @Override
        public void streamBroke(UUID bankId, int rank, io.kvreuse.protocol.StreamBreak report) throws FeedException {
            real.streamBroke(bankId, rank, report);
            broke.countDown();
        }

        @Override
        public void reset(UUID bankId, long ifEpoch) throws FeedException {
            real.reset(bankId, ifEpoch);
        }
    }

    @Test
    void aGapTheReplayCannotFillNeedsASnapshotAndTheStreamResumesAfterIt() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(4);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0]), null, 0, "GPU")), 0));
        await(() -> blocks(bank, 0) == 1, "the first block");
        p.lose(3);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[1]), chain[0], 1, "GPU")), 0));
        await(() -> Boolean.TRUE.equals(part(bank, 0).get("needsSnapshot")), "the rank needs a snapshot");
        assertThat(view(bank)).containsEntry("state", "UNPUBLISHED");
        assertThat(audit(bank)).contains("EVENT_GAP");
        assertThat(count("gaps.unrecovered")).isEqualTo(1);
        long resumeAt = p.nextSequence() - 1;

        // the engine snapshots the rank as of its latest sequence; the bridge resumes behind it
        snapshot(bank, 0, List.of(block(chain[0], null, 0, 0), block(chain[1], chain[0], 1, 1)), resumeAt);
        await(() -> Boolean.FALSE.equals(part(bank, 0).get("needsSnapshot")), "snapshot applied");
        p.awaitNewSubscription(); // the bridge's next refresh resubscribes
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[2], chain[3]), chain[1], 2, "GPU")), 0));
        await(() -> blocks(bank, 0) == 4, "events after the snapshot applied");
        assertThat(view(bank)).containsEntry("state", "PUBLISHED");
    }

    @Test
    void aBackwardsSequenceIsAnEngineRestartThatNeedsASnapshot() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(3);
        p.publish(vllmArrayBatch(List.of(storedArray(u64(chain[0]), null, 0)), 0));
        p.publish(vllmArrayBatch(List.of(storedArray(u64(chain[1]), chain[0], 1)), 0));
        await(() -> blocks(bank, 0) == 2, "two blocks");
        p.restart();
        p.publish(vllmArrayBatch(List.of(storedArray(u64(chain[2]), null, 0)), 0));
        await(() -> Boolean.TRUE.equals(part(bank, 0).get("needsSnapshot")), "the rank needs a snapshot");
        assertThat(audit(bank)).contains("ENGINE_RESTART").doesNotContain("EVENT_GAP");
        assertThat(count("restarts")).isEqualTo(1);
        assertThat(blocks(bank, 0)).isEqualTo(2); // nothing of the new incarnation's stream applied on stale state
    }

    @Test
    void malformedAndOffGpuEventsAreCountedWithoutDroppingTheirSiblings() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 64);
        listening(bank);
        long[] chain = Fleet.chain(3);
        List<Object> events = new ArrayList<>();
        events.add(storedMap(u64(chain[0]), null, 0, "GPU"));
        events.add(Map.of("type", "BlockStored", "block_hashes", List.of("zz")));
        events.add(storedMap(u64(chain[1]), chain[0], 1, "CPU"));
        events.add(storedMap(u64(chain[2]), chain[0], 999, "GPU")); // slot outside the bank
        events.add(storedMap(u64(chain[1]), chain[0], 1, "GPU"));
        bank.publishers().getFirst().publish(vllmMapBatch(events, 0));
        await(() -> blocks(bank, 0) == 2, "the two valid GPU blocks");
        assertThat(count("malformed")).isEqualTo(1);
        assertThat(count("ignored.medium")).isEqualTo(1);
        assertThat(count("unmapped")).isEqualTo(1);
        assertThat(part(bank, 0)).containsEntry("needsSnapshot", false);
    }

    @Test
    void thousandEventBatchesOnManyRanksArriveInOrder() throws Exception {
        int tp = 8;
        Bank bank = bank(tp, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 4096);
        listening(bank);
        long[] chain = Fleet.chain(2000);
        for (int round = 0; round < 2; round++) {
            for (int r = 0; r < tp; r++) {
                List<Object> events = new ArrayList<>();
                for (int i = round * 1000; i < (round + 1) * 1000; i++) {
                    events.add(storedArray(u64(chain[i]), i == 0 ? null : chain[i - 1], i));
                }
                bank.publishers().get(r).publish(vllmArrayBatch(events, r));
            }
        }
        // then remove the last 500 on every rank: applied after the stores, never before
        for (int r = 0; r < tp; r++) {
            bank.publishers()
                    .get(r)
                    .publish(vllmArrayBatch(List.of(removedArray(u64(Arrays.copyOfRange(chain, 1500, 2000)))), r));
        }
        await(
                () -> java.util.stream.IntStream.range(0, tp)
                        .allMatch(r -> ((Number) part(bank, r).get("appliedThroughEventId")).longValue() == 2000),
                "every rank applied through its removal");
        assertThat(eligible(bank)).isEqualTo(1500);
        for (int r = 0; r < tp; r++) {
            assertThat(part(bank, r))
                    .containsEntry("appliedThroughEventId", 2000)
                    .containsEntry("blocks", 1500);
        }
        assertThat(count("forwarded")).isEqualTo(8 * 2001.0);
    }

    @Test
    void engineBatchesThatReuseEachOthersSlotsAreNotMergedIntoOneTheApiRefuses() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 64);
        listening(bank);
        int batches = 40;
        for (int b = 0; b < batches; b++) {
            // every engine batch stores 16 new blocks into slots 0-15, evicting the previous batch's
            List<Object> events = new ArrayList<>();
            long[] blocks = Fleet.chain(16);
            for (int e = 0; e < 4; e++) {
                events.add(storedArray(u64(Arrays.copyOfRange(blocks, 4 * e, 4 * e + 4)), null, 4 * e));
            }
            // published back to back, faster than the bridge posts: batches queue up behind each POST
            bank.publishers().getFirst().publish(vllmArrayBatch(events, 0));
        }
        await(
                () -> ((Number) part(bank, 0).get("appliedThroughEventId")).longValue() == 4L * batches - 1,
                "every event applied");
        assertThat(count("refused")).isZero();
        assertThat(registry.timer("kvreuse.agent.kv.events.post").count())
                .as("no merged batch was refused and retried event by event")
                .isLessThanOrEqualTo(batches);
        assertThat(part(bank, 0)).containsEntry("blocks", 16).containsEntry("needsSnapshot", false);
    }

    @Test
    void aRestartedAgentResumesFromTheControlPlanesPosition() throws Exception {
        Bank bank = bank(1, "VLLM_KV_EVENTS", "NATIVE_CACHE_CLEARED", 256);
        KvEventBridge first = listening(bank);
        TestPublisher p = bank.publishers().getFirst();
        long[] chain = Fleet.chain(5);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[0], chain[1]), null, 0, "GPU")), 0));
        await(() -> blocks(bank, 0) == 2, "two blocks");
        first.close();
        // published while no agent listens: only the replay still has them
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[2]), chain[1], 2, "GPU")), 0));
        p.publish(vllmMapBatch(List.of(removedArray(u64(chain[0]))), 0));
        listening(bank);
        p.publish(vllmMapBatch(List.of(storedMap(u64(chain[3], chain[4]), chain[2], 3, "GPU")), 0));
        await(() -> blocks(bank, 0) == 4, "everything published during the restart applied once");
        assertThat(part(bank, 0)).containsEntry("appliedThroughEventId", 3).containsEntry("needsSnapshot", false);
        assertThat(count("gaps.unrecovered")).isZero();
        // the child of a block stored before the restart was placed by the control plane
        assertThat(positions(bank)).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aSubscriberThatStopsAtEveryStartIsRestartedAtEveryRefreshButSaysSoOnce(CapturedOutput output)
            throws Exception {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        Engine decode = fleet.ready("DECODE", domain, 1, host);
        String bankId = fleet.bank(decode, 1, 256);
        // a host name that never resolves (RFC 2606): the API takes it, ZMQ's connect throws at every start
        String endpoint = "tcp://kv-" + bankId.substring(0, 8) + ".no-such-host.invalid:5557";
        http.put()
                .uri("/api/v1/banks/" + bankId + "/event-source")
                .header("Authorization", "Bearer " + decode.token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "format",
                        "VLLM_KV_EVENTS",
                        "allBlocksCleared",
                        "NATIVE_CACHE_CLEARED",
                        "ranks",
                        List.of(Map.of("rank", 0, "endpoint", endpoint))))
                .exchange()
                .expectStatus()
                .isOk();
        bridge();
        if (!within(Duration.ofSeconds(60), () -> count("subscribers.restarted") >= 5)) {
            throw new AssertionError(
                    "the subscriber was restarted " + count("subscribers.restarted") + " times in 60 s");
        }
        String stream = "bank " + bankId + " rank 0: ";
        List<String> lines =
                output.getAll().lines().filter(l -> l.contains(bankId)).toList();
        // one warning with the cause for five and more stops, one subscription line for the restarts
        assertThat(lines.stream().filter(l -> l.contains(stream + "subscriber stopped: ")))
                .singleElement()
                .asString()
                .contains("no-such-host.invalid");
        assertThat(lines.stream().filter(l -> l.contains("subscribing to "))).hasSize(1);
        assertThat(lines.stream().filter(l -> l.contains("still stopping") || l.contains("another cause")))
                .isEmpty();
        assertThat(lines.stream().filter(l -> l.contains("running again"))).isEmpty();
    }

    @Test
    void mooncakeRfc1527StreamsWithBankResetClears() throws Exception {
        Bank bank = bank(2, "MOONCAKE_RFC1527", "BANK_RESET", 256);
        listening(bank);
        long[] chain = Fleet.chain(4);
        for (int r = 0; r < 2; r++) {
            bank.publishers()
                    .get(r)
                    .publish(rfc1527Batch(
                            List.of(
                                    rfcEvent(1, "stored", u64(chain[0], chain[1]), null, 0, 0),
                                    rfcEvent(2, "stored", u64(chain[2], chain[3]), chain[1], 2, 2)),
                            0));
        }
        await(() -> eligible(bank) == 4, "four blocks on both ranks");
        long epoch = ((Number) view(bank).get("bankEpoch")).longValue();
        for (int r = 0; r < 2; r++) {
            bank.publishers()
                    .get(r)
                    .publish(rfc1527Batch(
                            List.of(
                                    rfcEvent(3, "cleared", null, null, null, 0),
                                    rfcEvent(4, "stored", u64(chain[0]), null, 0, 0)),
                            0));
        }
        await(() -> eligible(bank) == 1, "only the block stored after the reset");
        // both ranks' clears are one reset
        assertThat(((Number) view(bank).get("bankEpoch")).longValue()).isEqualTo(epoch + 1);
        assertThat(count("bank.resets")).isEqualTo(2);
    }

    // ---- helpers ----

    private double count(String name) {
        return registry.counter("kvreuse.agent.kv.events." + name).count();
    }

    private Map<String, Object> view(Bank bank) {
        return fleet.get("/api/v1/banks/" + bank.bankId(), bank.decode().token());
    }

    private long eligible(Bank bank) {
        return ((Number) view(bank).get("eligibleBlocks")).longValue();
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> part(Bank bank, int rank) {
        return ((List<Map<String, Object>>) view(bank).get("parts")).get(rank);
    }

    private long blocks(Bank bank, int rank) {
        return ((Number) part(bank, rank).get("blocks")).longValue();
    }

    private String fleetDomainOf(Bank bank) {
        return (String) fleet.get(
                        "/api/v1/incarnations/" + bank.decode().id(),
                        bank.decode().token())
                .get("domainId");
    }

    private List<Integer> positions(Bank bank) {
        return db.sql("SELECT position FROM bank_block WHERE bank_id = :b AND rank = 0 ORDER BY position")
                .bind("b", UUID.fromString(bank.bankId()))
                .map((row, meta) -> row.get("position", Integer.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private List<String> audit(Bank bank) {
        return db.sql("SELECT action FROM audit_event WHERE subject_id = :s")
                .bind("s", bank.bankId())
                .map((row, meta) -> row.get("action", String.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private static Map<String, Object> block(long hash, Long parent, int position, int slot) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("seqHash", Long.toUnsignedString(hash));
        if (parent != null) {
            b.put("parentHash", Long.toUnsignedString(parent));
        }
        b.put("position", position);
        b.put("slot", slot);
        return b;
    }

    private void snapshot(Bank bank, int rank, List<Map<String, Object>> blocks, long sourceSequence) {
        long through = ((Number) part(bank, rank).get("appliedThroughEventId")).longValue();
        http.put()
                .uri("/api/v1/banks/" + bank.bankId() + "/parts/" + rank + "/snapshot")
                .header("Authorization", "Bearer " + bank.decode().token())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("throughEventId", through, "blocks", blocks, "sourceSequence", sourceSequence))
                .exchange()
                .expectStatus()
                .isOk();
    }

    private Map<String, Object> select(String router, String target, long[] chain) {
        return http.post()
                .uri("/api/v1/donor-selections")
                .header("Authorization", "Bearer " + router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "requestId",
                        "req-" + UUID.randomUUID(),
                        "targetIncarnationId",
                        target,
                        "seqHashes",
                        Arrays.stream(chain).mapToObj(Long::toUnsignedString).toList(),
                        "localPrefixBlocks",
                        0,
                        "deadlineMs",
                        10_000))
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(JSON)
                .returnResult()
                .getResponseBody();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        if (!within(Duration.ofSeconds(20), condition)) {
            throw new AssertionError("timed out waiting for " + what);
        }
    }

    /** Whether {@code condition} came true within {@code bound}. */
    private static boolean within(Duration bound, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }
}
