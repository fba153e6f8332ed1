package io.kvreuse.web;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/** The one table from catalogued problems and framework errors to RFC 9457 documents. */
public final class Problems {

    /** Base of every problem {@code type}; the slug is stable per problem. */
    public static final String TYPE_BASE = ProblemType.TYPE_BASE;

    private Problems() {}

    /** The one mapping from a problem to its HTTP status, for JSON and HTML errors alike. */
    public static HttpStatus status(ProblemType type) {
        return HttpStatus.valueOf(type.status());
    }

    static Problem of(KvReuseException e) {
        Problem p = new Problem(e.type(), e.getMessage());
        p.extensions().putAll(e.properties());
        if (e.type().retryable()) {
            p.extensions().put("retryable", true);
        }
        return p;
    }

    /** A problem document under construction: the catalogued problem, this occurrence's detail. */
    public record Problem(ProblemType type, @Nullable String detail, Map<String, Object> extensions) {

        public Problem(ProblemType type, @Nullable String detail) {
            this(type, detail, new LinkedHashMap<>());
        }

        public HttpStatus status() {
            return Problems.status(type);
        }

        public String slug() {
            return type.slug();
        }

        Problem with(String name, Object value) {
            extensions.put(name, value);
            return this;
        }

        Map<String, Object> body(String instance) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("type", type.uri());
            body.put("title", type.title());
            body.put("status", type.status());
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
        return new Problem(ProblemType.INVALID_REQUEST, detail).with("errors", errors);
    }
}
