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
                    || t instanceof java.util.concurrent.TimeoutException) {
                return true;
            }
        }
        return false;
    }
}
