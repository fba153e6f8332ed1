package io.kvreuse.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Delivered transfers calibrate their domain's cost model: the domain package folds the samples
 * leases hand in into {@code transfer_calibration} and refits {@code domain_cost_model}.
 */
@IntegrationTest
class TransferCalibrationIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    TransferCalibration calibration;

    @Test
    void samplesOfOneDomainFitItsSetupAndBandwidthAndLeaveOtherDomainsAlone() {
        Fleet fleet = new Fleet(http, tokens);
        String calibrated = fleet.domain(2, "GPU_CUDA_IPC");
        String untouched = fleet.domain(2, "GPU_CUDA_IPC");
        // ms = 2 + bytes / (40 GB/s), exactly, at five sizes; one empty sample that must not count
        long[] sizes = {1_000_000, 4_000_000, 16_000_000, 64_000_000, 256_000_000};
        for (long bytes : sizes) {
            calibration
                    .sample(calibrated, TransportClass.GPU_CUDA_IPC, bytes, 2.0 + bytes / 40e6)
                    .block();
        }
        calibration.sample(calibrated, TransportClass.GPU_CUDA_IPC, 0, 5.0).block();
        calibration.flush().block(Duration.ofSeconds(10));

        Map<String, Object> model = awaitModel(calibrated, sizes.length);
        assertThat(((Number) model.get("transfer_setup_ms")).doubleValue()).isCloseTo(2.0, within(1e-6));
        assertThat(((Number) model.get("transfer_gbytes_per_s")).doubleValue()).isCloseTo(40.0, within(1e-6));
        // what calibration cannot measure stays at the transport's defaults
        assertThat(((Number) model.get("prefill_ms_per_token")).doubleValue())
                .isEqualTo(CostModel.defaults(TransportClass.GPU_CUDA_IPC).prefillMsPerToken());
        assertThat(model).containsEntry("updated_by", "system:calibration");
        Long moments = db.sql("SELECT samples FROM transfer_calibration WHERE domain_id = :d")
                .bind("d", calibrated)
                .map((r, m) -> r.get("samples", Long.class))
                .one()
                .block();
        assertThat(moments).isEqualTo(sizes.length);

        for (String table : new String[] {"domain_cost_model", "transfer_calibration"}) {
            Long rows = db.sql("SELECT count(*) AS n FROM " + table + " WHERE domain_id = :d")
                    .bind("d", untouched)
                    .map((r, m) -> r.get("n", Long.class))
                    .one()
                    .block();
            assertThat(rows).as(table + " of a domain without samples").isZero();
        }
    }

    @Test
    void eachFlushFoldsItsSamplesInOrderAndRedoesAWriteAnotherReplicaOvertook() {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(2, "GPU_MNNVL");
        long[] burst = {2_000_000, 8_000_000, 3_000_000, 50_000_000};
        TransferCalibration.Moments expected = new TransferCalibration.Moments(0, 0, 0, 0, 0);
        for (long bytes : burst) {
            calibration
                    .sample(domain, TransportClass.GPU_MNNVL, bytes, 3.0 + bytes / 20e6)
                    .block();
            expected = expected.add(bytes, 3.0 + bytes / 20e6);
        }
        calibration.flush().block(Duration.ofSeconds(10));
        CostModel first = expected.fit(CostModel.defaults(TransportClass.GPU_MNNVL));
        assertModel(awaitModel(domain, burst.length), first);

        // another replica folds samples of its own in between: this replica's next write must start from them
        TransferCalibration.Moments theirs = expected.add(10_000_000, 4.0).add(1_000_000, 3.5);
        db.sql("""
                        UPDATE transfer_calibration SET mean_x = :x, mean_y = :y, mean_xx = :xx, mean_xy = :xy, samples = :n
                        WHERE domain_id = :d
                        """)
                .bind("x", theirs.x())
                .bind("y", theirs.y())
                .bind("xx", theirs.xx())
                .bind("xy", theirs.xy())
                .bind("n", theirs.samples())
                .bind("d", domain)
                .then()
                .block();
        calibration.sample(domain, TransportClass.GPU_MNNVL, 30_000_000, 4.6).block();
        calibration.flush().block(Duration.ofSeconds(10));
        TransferCalibration.Moments after = theirs.add(30_000_000, 4.6);
        assertModel(awaitModel(domain, after.samples()), after.fit(first));
        Map<String, Object> moments = db.sql("SELECT * FROM transfer_calibration WHERE domain_id = :d")
                .bind("d", domain)
                .fetch()
                .one()
                .block();
        assertThat(((Number) moments.get("mean_xy")).doubleValue()).isEqualTo(after.xy());
        assertThat(((Number) moments.get("samples")).longValue()).isEqualTo(burst.length + 3);
    }

    private static void assertModel(Map<String, Object> model, CostModel expected) {
        assertThat(((Number) model.get("transfer_setup_ms")).doubleValue()).isEqualTo(expected.transferSetupMs());
        assertThat(((Number) model.get("transfer_gbytes_per_s")).doubleValue())
                .isEqualTo(expected.transferGbytesPerS());
        assertThat(model).containsEntry("updated_by", "system:calibration");
    }

    /** The domain's cost model once it counts {@code samples} (the 1 s timer may have flushed first). */
    private Map<String, Object> awaitModel(String domainId, long samples) {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            Map<String, Object> model = db.sql("SELECT * FROM domain_cost_model WHERE domain_id = :d")
                    .bind("d", domainId)
                    .fetch()
                    .one()
                    .block();
            if (model != null && ((Number) model.get("samples")).longValue() == samples) {
                return model;
            }
            assertThat(System.nanoTime())
                    .as("cost model of " + domainId + " with " + samples + " samples")
                    .isLessThan(until);
            calibration.flush().block(Duration.ofSeconds(10));
        }
    }
}
