package io.kvreuse.store;

import io.r2dbc.postgresql.codec.PostgresqlObjectId;
import java.util.Collection;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL array in its text form ({@code {1,2,NULL}}), built element by element and bound as a
 * parameter of its array type ({@link PgArray}, sent by {@link PgArrayCodec}). The driver's own
 * array encoding boxes every element and runs each through its element codec and quoting: for a
 * proposal's 256 hashes that cost more of the control plane's CPU than the lookup that chose the
 * donor. Text elements are always quoted, so no value can end an element early.
 */
public final class ArrayLiteral {

    /** The element types the statements bind arrays of, with their array types. */
    public enum Type {
        BIGINT(PostgresqlObjectId.INT8_ARRAY),
        INTEGER(PostgresqlObjectId.INT4_ARRAY),
        DOUBLE(PostgresqlObjectId.FLOAT8_ARRAY),
        BOOLEAN(PostgresqlObjectId.BOOL_ARRAY),
        UUID(PostgresqlObjectId.UUID_ARRAY),
        TEXT(PostgresqlObjectId.TEXT_ARRAY);

        final int arrayOid;

        Type(PostgresqlObjectId array) {
            this.arrayOid = array.getObjectId();
        }
    }

    private final Type type;
    private final StringBuilder text;
    private boolean first = true;

    /** An empty array of {@code type}, with room for about {@code elements} elements of {@code width} characters. */
    public ArrayLiteral(Type type, int elements, int width) {
        this.type = type;
        this.text = new StringBuilder(2 + elements * (width + 1)).append('{');
    }

    public ArrayLiteral add(long value) {
        next().append(value);
        return this;
    }

    public ArrayLiteral add(double value) {
        next().append(value);
        return this;
    }

    public ArrayLiteral add(boolean value) {
        next().append(value ? 't' : 'f');
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

    /** Each of {@code values}. */
    public ArrayLiteral addAll(long[] values) {
        for (long v : values) {
            add(v);
        }
        return this;
    }

    /** Each of {@code values}. */
    public ArrayLiteral addAll(int[] values) {
        for (int v : values) {
            add(v);
        }
        return this;
    }

    /**
     * An element of any type this class writes ({@code Long}, {@code Integer}, {@code Double},
     * {@code Boolean}, {@code UUID}, {@code String}); {@code null} is SQL NULL.
     */
    public ArrayLiteral addValue(@Nullable Object value) {
        return switch (value) {
            case null -> add((String) null);
            case Long v -> add(v.longValue());
            case Integer v -> add(v.longValue());
            case Double v -> add(v.doubleValue());
            case Boolean v -> add(v.booleanValue());
            case UUID v -> add(v);
            case String v -> add(v);
            default ->
                throw new IllegalArgumentException(
                        "no array element of type " + value.getClass().getName());
        };
    }

    /** One element per item of {@code items}, written by {@code element}, as an array of {@code type}. */
    public static <T> PgArray column(
            Type type, Collection<T> items, int width, BiConsumer<ArrayLiteral, ? super T> element) {
        ArrayLiteral a = new ArrayLiteral(type, items.size(), width);
        for (T item : items) {
            element.accept(a, item);
        }
        return a.build();
    }

    private StringBuilder next() {
        if (!first) {
            text.append(',');
        }
        first = false;
        return text;
    }

    /** The array, to bind; nothing may be added after. */
    public PgArray build() {
        return new PgArray(text.append('}').toString(), type.arrayOid);
    }

    /**
     * An array parameter in PostgreSQL's text form and its array type's oid: PostgreSQL parses it
     * once, at bind time, as a value of that type, so a custom plan sees it as a constant.
     */
    public record PgArray(String text, int oid) {}
}
