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
 * through the change feed, before any periodic refresh could have read it.
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
        // 200 committed changes of one row, each notifying: far more than the directory reloads meanwhile.
        // A periodic refresh (every 5 s) that reads after the last change could bring it too, so a burst
        // during which one ended proves nothing about the feed and is repeated with new values.
        double last = 1.0;
        for (int attempt = 1; ; attempt++) {
            double first = last + 1;
            last = first + 199;
            Flux.range(0, 199).concatMap(i -> update(domain, first + i)).blockLast();
            // a refresh that ended before this point read before the last change was committed
            long refreshes = fleet.domainRefreshes();
            update(domain, last).block();
            long start = System.nanoTime();
            while (cost(domain) != last) {
                assertThat((System.nanoTime() - start) / 1_000_000)
                        .as("ms until the last change arrived")
                        .isLessThan(30_000);
                Thread.sleep(5);
            }
            if (fleet.domainRefreshes() == refreshes) {
                break; // no full read ended since before the last change: the feed brought it
            }
            assertThat(attempt).as("bursts overlapped by a periodic refresh").isLessThan(5);
        }
        assertThat(fleet.domain(domain).costModel().transferSetupMs()).isEqualTo(1.0);
    }

    private reactor.core.publisher.Mono<Void> update(String domain, double value) {
        return db.sql("UPDATE domain_cost_model SET prefill_ms_per_token = :v WHERE domain_id = :d")
                .bind("v", value)
                .bind("d", domain)
                .then();
    }

    private double cost(String domain) {
        FleetDirectory.Domain d = fleet.domain(domain);
        return d == null ? -1 : d.costModel().prefillMsPerToken();
    }
}
