package io.kvreuse.incarnation;

import io.r2dbc.postgresql.api.PostgresqlException;
import org.jspecify.annotations.Nullable;

/** Reads which unique constraint a failed statement violated, so each maps to its own problem. */
final class Constraints {

    private static final String UNIQUE_VIOLATION = "23505";

    private Constraints() {}

    static @Nullable String uniqueViolated(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof PostgresqlException pg
                    && UNIQUE_VIOLATION.equals(pg.getErrorDetails().getCode())) {
                return pg.getErrorDetails().getConstraintName().orElse(null);
            }
        }
        return null;
    }
}
