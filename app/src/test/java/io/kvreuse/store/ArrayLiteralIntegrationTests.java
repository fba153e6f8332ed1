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

/**
 * Array parameters read back by PostgreSQL's own array input, element for element, and typed as
 * their array type without a cast in the statement.
 */
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
        ArrayLiteral literal = new ArrayLiteral(ArrayLiteral.Type.TEXT, values.length, 8);
        for (String v : values) {
            literal.add(v);
        }
        String[] back = db.sql("SELECT :a AS v")
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
        ArrayLiteral bigints = new ArrayLiteral(ArrayLiteral.Type.BIGINT, longs.length, 20).addAll(longs);
        ArrayLiteral floats = new ArrayLiteral(ArrayLiteral.Type.DOUBLE, doubles.length, 8);
        Arrays.stream(doubles).forEach(floats::add);
        ArrayLiteral uuids = new ArrayLiteral(ArrayLiteral.Type.UUID, ids.length, 36);
        Arrays.stream(ids).forEach(uuids::add);
        ArrayLiteral empty = new ArrayLiteral(ArrayLiteral.Type.INTEGER, 0, 0);

        var row = db.sql("""
                        SELECT :l AS l, :d AS d, :u AS u, cardinality(:e) AS e,
                               concat_ws(' ', pg_typeof(:l), pg_typeof(:d), pg_typeof(:u), pg_typeof(:e), pg_typeof(:b)) AS types,
                               :b AS b
                        """)
                .bind("l", bigints.build())
                .bind("d", floats.build())
                .bind("u", uuids.build())
                .bind("e", empty.build())
                .bind(
                        "b",
                        new ArrayLiteral(ArrayLiteral.Type.BOOLEAN, 3, 1)
                                .add(true)
                                .add(false)
                                .addValue(null)
                                .build())
                .map((r, m) -> new Object[] {
                    r.get("l", Long[].class),
                    r.get("d", Double[].class),
                    r.get("u", UUID[].class),
                    r.get("e", Integer.class),
                    r.get("types", String.class),
                    r.get("b", Boolean[].class)
                })
                .one()
                .block(Duration.ofSeconds(5));
        assertThat((Long[]) row[0]).containsExactly(Arrays.stream(longs).boxed().toArray(Long[]::new));
        assertThat((Double[]) row[1])
                .containsExactly(Arrays.stream(doubles).boxed().toArray(Double[]::new));
        assertThat((UUID[]) row[2]).containsExactly(ids);
        assertThat(row[3]).isEqualTo(0);
        assertThat(row[4])
                .as("each reaches PostgreSQL as a parameter of its array type, not as text to cast")
                .isEqualTo("bigint[] double precision[] uuid[] integer[] boolean[]");
        assertThat((Boolean[]) row[5]).containsExactly(true, false, null);
    }
}
