package io.kvreuse.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

/** Array literals read back by PostgreSQL's own array input, element for element. */
@IntegrationTest
class ArrayLiteralIntegrationTests {

    @Autowired
    DatabaseClient db;

    @Test
    void textElementsComeBackExactlyWhateverTheyContain() {
        String[] values = {
            "plain",
            "",
            " spaced out ",
            "a,b",
            "{braces}",
            "\"quoted\"",
            "back\\slash",
            "\\\"",
            "NULL",
            "null",
            "ünïcödé ✓",
            "tab\there",
            "line\nbreak",
            null,
            "trailing\\"
        };
        ArrayLiteral literal = new ArrayLiteral(values.length, 8);
        for (String v : values) {
            literal.add(v);
        }
        String[] back = db.sql("SELECT CAST(:a AS TEXT[]) AS v")
                .bind("a", literal.build())
                .map((r, m) -> r.get("v", String[].class))
                .one()
                .block(Duration.ofSeconds(5));
        assertThat(back).containsExactly(values);
    }

    @Test
    void numbersAndIdsComeBackExactly() {
        long[] longs = new SplittableRandom(7).longs(300).toArray();
        longs[0] = Long.MIN_VALUE;
        longs[1] = Long.MAX_VALUE;
        longs[2] = 0;
        double[] doubles = {0.0, -1.5, 1e-5, 123456.789, 6.02e23, Double.MAX_VALUE, Double.MIN_VALUE};
        UUID[] ids = {UUID.randomUUID(), new UUID(0, 0), new UUID(-1, -1)};
        ArrayLiteral bigints = new ArrayLiteral(longs.length, 20).addAll(longs);
        ArrayLiteral floats = new ArrayLiteral(doubles.length, 8);
        Arrays.stream(doubles).forEach(floats::add);
        ArrayLiteral uuids = new ArrayLiteral(ids.length, 36);
        Arrays.stream(ids).forEach(uuids::add);
        ArrayLiteral empty = new ArrayLiteral(0, 0);

        var row = db.sql("""
                        SELECT CAST(:l AS BIGINT[]) AS l, CAST(:d AS DOUBLE PRECISION[]) AS d, CAST(:u AS UUID[]) AS u,
                               cardinality(CAST(:e AS INTEGER[])) AS e
                        """)
                .bind("l", bigints.build())
                .bind("d", floats.build())
                .bind("u", uuids.build())
                .bind("e", empty.build())
                .map((r, m) -> new Object[] {
                    r.get("l", Long[].class),
                    r.get("d", Double[].class),
                    r.get("u", UUID[].class),
                    r.get("e", Integer.class)
                })
                .one()
                .block(Duration.ofSeconds(5));
        assertThat((Long[]) row[0]).containsExactly(Arrays.stream(longs).boxed().toArray(Long[]::new));
        assertThat((Double[]) row[1])
                .containsExactly(Arrays.stream(doubles).boxed().toArray(Double[]::new));
        assertThat((UUID[]) row[2]).containsExactly(ids);
        assertThat(row[3]).isEqualTo(0);
    }
}
