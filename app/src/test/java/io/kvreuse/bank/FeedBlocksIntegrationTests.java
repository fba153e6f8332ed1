package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.support.IntegrationTest;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

/** The binary feed row as PostgreSQL builds it (V91's {@code kvreuse_feed_blocks}), read back by the control plane. */
@IntegrationTest
class FeedBlocksIntegrationTests {

    @Autowired
    DatabaseClient db;

    private byte[] row(String arguments) {
        return db.sql("SELECT kvreuse_feed_blocks(" + arguments + ") AS blocks")
                .map((r, meta) -> r.get("blocks", byte[].class))
                .one()
                .block(Duration.ofSeconds(10));
    }

    @Test
    void storesThenRemovesWithTheirParentsPositionsSlotsAndLineages() {
        byte[] row = row("""
                5, ARRAY[-9223372036854775808, 12, 9223372036854775807]::bigint[], ARRAY[NULL, -9223372036854775808, 12]::bigint[],
                ARRAY[0, 1, 100000000]::int[], ARRAY[7, 0, 2147483647]::int[], ARRAY[NULL, 'img:é"x', NULL]::text[],
                ARRAY[-3, 4]::bigint[]""");
        assertThat(FeedBlocks.read(row))
                .containsExactly(
                        new IndexOp(IndexOp.Kind.STORE, Long.MIN_VALUE, null, 0, 7, null, 0),
                        new IndexOp(IndexOp.Kind.STORE, 12, Long.MIN_VALUE, 1, 0, "img:é\"x", 0),
                        new IndexOp(IndexOp.Kind.STORE, Long.MAX_VALUE, 12L, 100_000_000, Integer.MAX_VALUE, null, 0),
                        IndexOp.remove(-3),
                        IndexOp.remove(4));
    }

    @Test
    void aBatchWithOnlyRemovalsOrOnlyStoresAndOneWithoutOps() {
        // array_agg over no row is NULL: the function writes an empty array for it
        assertThat(FeedBlocks.read(row("2, NULL, NULL, NULL, NULL, NULL, ARRAY[1, 2]::bigint[]")))
                .containsExactly(IndexOp.remove(1), IndexOp.remove(2));
        assertThat(FeedBlocks.read(row(
                        "1, ARRAY[5]::bigint[], ARRAY[NULL]::bigint[], ARRAY[0], ARRAY[3], ARRAY[NULL]::text[], NULL")))
                .containsExactly(new IndexOp(IndexOp.Kind.STORE, 5, null, 0, 3, null, 0));
        assertThat(db.sql("SELECT kvreuse_feed_blocks(0, NULL, NULL, NULL, NULL, NULL, NULL) IS NULL AS none")
                        .map((r, meta) -> r.get("none", Boolean.class))
                        .one()
                        .block(Duration.ofSeconds(10)))
                .isTrue();
    }

    @Test
    void aMalformedRowIsAnErrorNotAPartialList() {
        byte[] row = row(
                "2, ARRAY[5]::bigint[], ARRAY[4]::bigint[], ARRAY[1], ARRAY[3], ARRAY[NULL]::text[], ARRAY[9]::bigint[]");
        assertThat(FeedBlocks.read(row)).hasSize(2);
        assertThatThrownBy(() -> FeedBlocks.read(Arrays.copyOf(row, row.length - 1)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> FeedBlocks.read(Arrays.copyOf(row, row.length + 4)))
                .isInstanceOf(IllegalStateException.class);
        // arrays of different lengths
        byte[] uneven = row(
                "3, ARRAY[5, 6]::bigint[], ARRAY[4]::bigint[], ARRAY[1, 2], ARRAY[3, 4], ARRAY[NULL, NULL]::text[], NULL");
        assertThatThrownBy(() -> FeedBlocks.read(uneven)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> FeedBlocks.read(new byte[0])).isInstanceOf(IllegalStateException.class);
    }
}
