package io.kvreuse.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.ApiCallException;
import io.kvreuse.testkit.FleetBuilder;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.Problem;
import io.kvreuse.testkit.Requests;
import io.kvreuse.testkit.SampleContracts;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The shared test kit against the real control plane: what the fleet builder builds is what the
 * control plane then holds (READY engines, a PUBLISHED bank, a registered agent, a hint from the
 * donor), and a refused call reads as a problem and changes nothing.
 */
@IntegrationTest
class TestKitIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient http;

    private ReuseSettingsFixture settings;
    private KvReuseClient operator;

    @BeforeEach
    void operator() {
        settings = new ReuseSettingsFixture(http, TestTokens.BOOTSTRAP);
        settings.apply(ReuseSettingsFixture::permissive);
        operator = new KvReuseClient("http://localhost:" + port, TestTokens.BOOTSTRAP);
    }

    @AfterEach
    void restore() {
        settings.restore();
    }

    @Test
    void theFleetBuilderBuildsAFleetTheControlPlaneServesAHintFrom() throws Exception {
        FleetBuilder fleet = new FleetBuilder(operator);
        String domain = fleet.domain(SampleContracts.unique("kit"));
        String host = Requests.host();
        FleetBuilder.Donor donor = fleet.donor(domain, host, 2, 0, 64, 1048576);
        FleetBuilder.Engine target = fleet.target(domain, host, 2, 2);
        FleetBuilder.Agent agent = fleet.agent(host, 4);
        long[] chain = Requests.randomChain(8);
        fleet.store(donor, chain, 0, 1);

        JsonNode decode = operator.get("/api/v1/incarnations/" + donor.id()).expectJson(200);
        assertThat(decode.get("state").asString()).isEqualTo("READY");
        assertThat(decode.get("role").asString()).isEqualTo("DECODE");
        assertThat(decode.get("fencingEpoch").asLong()).isEqualTo(donor.engine().fencingEpoch());
        JsonNode prefill = operator.get("/api/v1/incarnations/" + target.id()).expectJson(200);
        assertThat(prefill.get("state").asString()).isEqualTo("READY");
        assertThat(prefill.get("role").asString()).isEqualTo("PREFILL");
        assertThat(operator.get("/api/v1/banks/" + donor.bankId())
                        .expectJson(200)
                        .get("state")
                        .asString())
                .isEqualTo("PUBLISHED");
        assertThat(operator.get("/api/v1/agents/" + host).status()).isEqualTo(200);
        assertThat(agent.agentEpoch()).isPositive();

        KvReuseClient router = fleet.router();
        JsonNode answer = router.select(Requests.selection(target.id(), chain, 1000));
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (!"HINT".equals(answer.get("decision").asString()) && System.nanoTime() < deadline) {
            Thread.sleep(100); // the index learns the bank asynchronously
            answer = router.select(Requests.selection(target.id(), chain, 1000));
        }
        assertThat(answer.get("decision").asString()).as(answer.toString()).isEqualTo("HINT");
        assertThat(answer.has("reason")).isFalse();
        JsonNode lease = operator.lease(answer.get("leaseId").asString());
        assertThat(lease.get("donorIncarnationId").asString()).isEqualTo(donor.id());
        assertThat(lease.get("targetIncarnationId").asString()).isEqualTo(target.id());
        assertThat(lease.get("bankId").asString()).isEqualTo(donor.bankId());
    }

    @Test
    void aRefusedCallReadsAsAProblemAndChangesNothing() {
        Map<String, Object> contract = SampleContracts.with(SampleContracts.unique("kit-refused"), "tpSize", 0);
        AtomicLong sent = new AtomicLong();
        KvReuseClient counting = operator.countingSentBytes(sent);

        Answer refused = counting.post("/api/v1/domains", contract);

        assertThat(refused.status()).as(refused.toString()).isBetween(400, 499);
        assertThat(refused.isProblem()).isTrue();
        Problem problem = refused.problem();
        assertThat(problem.status()).isEqualTo(refused.status());
        assertThat(problem.type()).startsWith("https://kvreuse.io/problems/");
        assertThat(problem.slug()).isNotBlank();
        assertThat(sent.get()).isPositive();
        assertThatThrownBy(() -> operator.certify(contract))
                .isInstanceOf(ApiCallException.class)
                .satisfies(e -> assertThat(((ApiCallException) e).status()).isEqualTo(refused.status()));
        String modelId = (String) contract.get("modelId");
        assertThat(operator.get("/api/v1/domains").expect(200).body()).doesNotContain(modelId);
        assertThat(operator.as("kvr_not-a-token").get("/api/v1/domains").status())
                .isEqualTo(401);
    }
}
