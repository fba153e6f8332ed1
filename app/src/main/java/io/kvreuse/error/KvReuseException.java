package io.kvreuse.error;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A domain exception naming its problem in the catalogue ({@link ProblemType}: slug, title and
 * status), with this occurrence's detail and machine-readable extension fields.
 */
public class KvReuseException extends RuntimeException {

    private final ProblemType type;
    private final Map<String, Object> properties = new LinkedHashMap<>();

    public KvReuseException(ProblemType type, String detail) {
        super(detail);
        this.type = type;
    }

    /** Adds an extension field for machines (e.g. {@code currentEpoch}); returns this. */
    public KvReuseException with(String name, @Nullable Object value) {
        if (value != null) {
            properties.put(name, value);
        }
        return this;
    }

    public ProblemType type() {
        return type;
    }

    public String slug() {
        return type.slug();
    }

    public String title() {
        return type.title();
    }

    public Map<String, Object> properties() {
        return Collections.unmodifiableMap(properties);
    }
}
