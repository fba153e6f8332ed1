package io.kvreuse.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.sim.SimDecodeEngine;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The demo's simulated decode engines publishing their banks as vLLM KVEvents, bridged by the agent. */
@IntegrationTest
class SimKvEventsIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @LocalServerPort
    int port;

    @Test
    void aSimulatedEnginesStoredTurnArrivesThroughItsKvEventStreams() throws Exception {
        Fleet fleet = new Fleet(http, tokens);
        String host = Fleet.host();
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        String base = "http://127.0.0.1:" + port;
        String engineToken = tokens.mint(Role.ENGINE, "sim-" + host);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KvEventBridge bridge = new KvEventBridge(
                                new HttpInventoryFeed(
                                        URI.create(base), tokens.mint(Role.AGENT, "agent-" + host, host), host),
                                registry,
                                Duration.ofMillis(100),
                                Duration.ofMillis(50))
                        .start();
                SimDecodeEngine engine = new SimDecodeEngine(
                                new SimHttp(base, engineToken, new AtomicLong()),
                                domain,
                                host,
                                new int[] {0, 1},
                                32,
                                1 << 20)
                        .withKvEvents()
                        .start()) {
            long[] chain = Fleet.chain(12);
            engine.store(chain, 0); // returns once the bank applied it
            Map<String, Object> bank = fleet.get("/api/v1/banks/" + engine.bankId(), engineToken);
            assertThat(bank.get("eligibleBlocks")).isEqualTo(12);
            engine.store(chain, 12, 12); // nothing new: an empty turn
            long[] longer = java.util.Arrays.copyOf(chain, 20);
            System.arraycopy(Fleet.chain(8), 0, longer, 12, 8);
            engine.store(longer, 12, 12);
            bank = fleet.get("/api/v1/banks/" + engine.bankId(), engineToken);
            assertThat(bank.get("eligibleBlocks")).isEqualTo(20);
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> parts = (List<Map<String, Object>>) bank.get("parts");
            assertThat(parts).allSatisfy(p -> assertThat(p).containsEntry("needsSnapshot", false));
            // the events came through the bridge, not the events API
            assertThat(registry.counter("kvreuse.agent.kv.events.forwarded").count())
                    .isGreaterThanOrEqualTo(4);
            assertThat(fleet.get("/api/v1/banks/" + engine.bankId() + "/event-source", engineToken))
                    .containsEntry("format", "VLLM_KV_EVENTS");
        }
    }
}
