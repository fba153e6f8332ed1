package io.kvreuse.error;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A domain exception with a stable problem {@code slug} (the last segment of its RFC 9457 {@code
 * type} URI), a fixed title and machine-readable extension fields.
 */
public class KvReuseException extends RuntimeException {

    private final ProblemKind kind;
    private final String slug;
    private final String title;
    private final Map<String, Object> properties = new LinkedHashMap<>();

    public KvReuseException(ProblemKind kind, String slug, String title, String detail) {
        super(detail);
        this.kind = kind;
        this.slug = slug;
        this.title = title;
    }

    /** Adds an extension field for machines (e.g. {@code currentEpoch}); returns this. */
    public KvReuseException with(String name, @Nullable Object value) {
        if (value != null) {
            properties.put(name, value);
        }
        return this;
    }

    public ProblemKind kind() {
        return kind;
    }

    public String slug() {
        return slug;
    }

    public String title() {
        return title;
    }

    public Map<String, Object> properties() {
        return Collections.unmodifiableMap(properties);
    }
}
