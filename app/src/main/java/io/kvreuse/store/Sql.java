package io.kvreuse.store;

import io.r2dbc.spi.Parameters;
import org.jspecify.annotations.Nullable;

/** Bind helpers for {@code DatabaseClient}. */
public final class Sql {

    private Sql() {}

    /** A bind value that may be null, typed so PostgreSQL can infer the parameter's type. */
    public static Object orNull(@Nullable Object value, Class<?> type) {
        return value == null ? Parameters.in(type) : value;
    }
}
