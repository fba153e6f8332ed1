package io.kvreuse.web;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/** The one table from problem kinds and framework errors to RFC 9457 documents. */
public final class Problems {

    /** Base of every problem {@code type}; the slug is stable per problem kind. */
    public static final String TYPE_BASE = ProblemKind.TYPE_BASE;

    private Problems() {}

    public static URI type(String slug) {
        return URI.create(TYPE_BASE + slug);
    }

    /** The one mapping from a problem kind to its HTTP status, for JSON and HTML errors alike. */
    public static HttpStatus status(ProblemKind kind) {
        return HttpStatus.valueOf(kind.status());
    }

    static Problem of(KvReuseException e) {
        Problem p = new Problem(status(e.kind()), e.slug(), e.title(), e.getMessage());
        p.extensions().putAll(e.properties());
        if (e.kind() == ProblemKind.UNAVAILABLE) {
            p.extensions().put("retryable", true);
        }
        return p;
    }

    /** A problem document under construction: status, stable slug, fixed title, detail. */
    public record Problem(
            HttpStatus status,
            String slug,
            String title,
            @Nullable String detail,
            Map<String, Object> extensions) {

        public Problem(HttpStatus status, String slug, String title, @Nullable String detail) {
            this(status, slug, title, detail, new LinkedHashMap<>());
        }

        Problem with(String name, Object value) {
            extensions.put(name, value);
            return this;
        }

        Map<String, Object> body(String instance) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("type", TYPE_BASE + slug);
            body.put("title", title);
            body.put("status", status.value());
            if (detail != null) {
                body.put("detail", detail);
            }
            body.put("instance", instance);
            body.putAll(extensions);
            return body;
        }
    }

    /** One invalid field of a request body. */
    public record FieldError(String field, String message) {}

    static Problem invalidFields(List<FieldError> errors) {
        String detail = errors.isEmpty()
                ? "the request is invalid"
                : errors.getFirst().field() + ": " + errors.getFirst().message()
                        + (errors.size() > 1 ? " (and " + (errors.size() - 1) + " more)" : "");
        return new Problem(HttpStatus.BAD_REQUEST, "invalid-request", "Invalid request", detail).with("errors", errors);
    }
}
