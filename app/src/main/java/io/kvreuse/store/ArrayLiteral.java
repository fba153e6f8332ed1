package io.kvreuse.store;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL array in its text form ({@code {1,2,NULL}}), built element by element, to bind as a
 * string and cast in the statement ({@code CAST(:hashes AS BIGINT[])}). The driver's own array
 * encoding boxes every element and runs each through its element codec and quoting: for the
 * proposal write's 256 hashes a selection that cost more of the control plane's CPU than the lookup
 * that chose the donor. Text elements are always quoted, so no value can end an element early.
 */
public final class ArrayLiteral {

    private final StringBuilder text;
    private boolean first = true;

    /** An empty literal, with room for about {@code elements} elements of {@code width} characters. */
    public ArrayLiteral(int elements, int width) {
        text = new StringBuilder(2 + elements * (width + 1)).append('{');
    }

    public ArrayLiteral add(long value) {
        next().append(value);
        return this;
    }

    public ArrayLiteral add(double value) {
        next().append(value);
        return this;
    }

    /** Each of {@code values}. */
    public ArrayLiteral addAll(long[] values) {
        for (long v : values) {
            add(v);
        }
        return this;
    }

    public ArrayLiteral add(UUID value) {
        next().append(value);
        return this;
    }

    /** A text element, quoted, with its quotes and backslashes escaped; {@code null} is SQL NULL. */
    public ArrayLiteral add(@Nullable String value) {
        StringBuilder s = next();
        if (value == null) {
            s.append("NULL");
            return this;
        }
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                s.append('\\');
            }
            s.append(c);
        }
        s.append('"');
        return this;
    }

    private StringBuilder next() {
        if (!first) {
            text.append(',');
        }
        first = false;
        return text;
    }

    /** The literal; nothing may be added after. */
    public String build() {
        return text.append('}').toString();
    }
}
