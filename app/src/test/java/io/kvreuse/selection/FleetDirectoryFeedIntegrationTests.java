package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.domain.Contracts;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;

/**
 * Notifications of one row that queue up are reloaded once, and the last change still arrives
 * through the change feed, well before the periodic refresh would bring it.
 */
@IntegrationTest
class FleetDirectoryFeedIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    FleetDirectory fleet;

    @Test
    void burstOfCostModelChangesEndsAtTheLastOne() throws InterruptedException {
        String domain = Contracts.certify(http, tokens.operator(), 1);
        db.sql("""
                        INSERT INTO domain_cost_model (domain_id, prefill_ms_per_token, transfer_setup_ms,
                            transfer_gbytes_per_s, updated_by)
                        VALUES (:d, 1, 1, 1, 'test')
                        """).bind("d", domain).then().block();
        // 200 committed changes of one row, each notifying: far more than the directory reloads meanwhile
        Flux.range(2, 200)
                .concatMap(i -> db.sql("UPDATE domain_cost_model SET prefill_ms_per_token = :v WHERE domain_id = :d")
                        .bind("v", (double) i)
                        .bind("d", domain)
                        .then())
                .blockLast();
        long start = System.nanoTime();
        while (cost(domain) != 201.0) {
            // the periodic refresh runs every 5 s: the last value must come through the feed first
            assertThat((System.nanoTime() - start) / 1_000_000)
                    .as("ms until the last change arrived")
                    .isLessThan(3_000);
            Thread.sleep(10);
        }
        assertThat(fleet.domain(domain).costModel().transferSetupMs()).isEqualTo(1.0);
    }

    private double cost(String domain) {
        FleetDirectory.Domain d = fleet.domain(domain);
        return d == null ? -1 : d.costModel().prefillMsPerToken();
    }
}
