package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** The feed row reader gives what binding {@code IndexOp[]} gives, for rows as Java and PostgreSQL write them. */
class IndexOpTests {

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void readsWhatTheMapperWritesAndWhatBindingReads() {
        List<IndexOp> ops = List.of(
                new IndexOp(IndexOp.Kind.STORE, -8_000_000_000_000_000_000L, 42L, 3, 17, "img:ab\"c", 0),
                new IndexOp(IndexOp.Kind.STORE, Long.MAX_VALUE, null, 0, 0, null, 0),
                IndexOp.remove(Long.MIN_VALUE),
                IndexOp.of(IndexOp.Kind.PUBLISH, 0),
                IndexOp.of(IndexOp.Kind.RESET, 7));
        byte[] row = json.writeValueAsBytes(ops);
        assertThat(IndexOp.readAll(json, row)).isEqualTo(ops);
        assertThat(IndexOp.readAll(json, row)).containsExactly(json.readValue(row, IndexOp[].class));
    }

    @Test
    void readsPostgresqlsJsonAggLayout() {
        String row = "[[\"STORE\", 12, null, 0, 5, null, 0], \n [\"REMOVE\", -3, null, 0, 0, null, 0]]";
        assertThat(IndexOp.readAll(json, row.getBytes(StandardCharsets.UTF_8)))
                .containsExactly(new IndexOp(IndexOp.Kind.STORE, 12, null, 0, 5, null, 0), IndexOp.remove(-3));
        assertThat(IndexOp.readAll(json, "[]".getBytes(StandardCharsets.UTF_8))).isEmpty();
    }

    @Test
    void aMalformedRowIsAnErrorNotAPartialList() {
        assertThatThrownBy(() -> IndexOp.readAll(json, "[[\"STORE\", 1, null, 0]]".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> IndexOp.readAll(json, "{}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class);
    }
}
