package io.kvreuse.error;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One item's answer in a batch request: its {@code result}, or the RFC 9457 {@code problem} that the
 * same report sent alone would have been answered with (same {@code type}, {@code status} and
 * extension fields). An item's problem changes nothing, and does not stop the other items.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        description =
                "One item's answer in a batch: its result, or the problem the same report sent alone would have got")
public record ItemResult<T>(
        @Schema(description = "The item's answer, when it succeeded") @Nullable
        T result,

        @Schema(
                description =
                        "The RFC 9457 problem of a failed item (type, title, status, detail and extension fields); it changed nothing",
                ref = "#/components/schemas/Problem")
        @Nullable
        Map<String, Object> problem,

        @JsonIgnore @Nullable KvReuseException error) {

    public static <T> ItemResult<T> ok(T result) {
        return new ItemResult<>(result, null, null);
    }

    public static <T> ItemResult<T> failed(KvReuseException e) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", e.type().uri());
        p.put("title", e.title());
        p.put("status", e.type().status());
        p.put("detail", e.getMessage());
        p.putAll(e.properties());
        return new ItemResult<>(null, p, e);
    }

    /** The result, or the item's problem thrown as the exception it came from. */
    public T orThrow() {
        if (error != null) {
            throw error;
        }
        if (result == null) {
            throw new IllegalStateException("an item result without result or problem");
        }
        return result;
    }
}
