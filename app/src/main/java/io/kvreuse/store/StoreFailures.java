package io.kvreuse.store;

/** Tells a failure of PostgreSQL itself (down, unreachable, connection lost, pool exhausted) from other errors. */
public final class StoreFailures {

    private StoreFailures() {}

    public static boolean isStoreFailure(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            String name = t.getClass().getName();
            if (name.startsWith("io.r2dbc.spi.R2dbcNonTransientResource")
                    || name.startsWith("io.r2dbc.spi.R2dbcTransient")
                    || name.contains("PostgresConnectionClosedException")
                    || t instanceof java.net.ConnectException
                    || t instanceof java.util.concurrent.TimeoutException
                    || (t instanceof io.r2dbc.spi.R2dbcException r && isServerGoingAway(r.getSqlState()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The server's own answers that it is going away or cannot take the connection: a connection
     * exception (class 08) and an operator's or a crash's shutdown, or a server still starting (57P01,
     * 57P02, 57P03). PostgreSQL sends them on the connection before closing it, so a statement in
     * flight when the database stops fails with one of them rather than with a closed connection. The
     * driver reports these codes as it reports any code it does not know (a non-transient resource
     * exception, as it also reports the application's own {@code RAISE}s), so they are told apart by
     * code, not by class.
     */
    private static boolean isServerGoingAway(@org.jspecify.annotations.Nullable String sqlState) {
        return sqlState != null
                && (sqlState.startsWith("08")
                        || sqlState.equals("57P01")
                        || sqlState.equals("57P02")
                        || sqlState.equals("57P03"));
    }
}
