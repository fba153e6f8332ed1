package io.kvreuse.support;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An open transaction holding {@code FOR KEY SHARE} on one row, as PostgreSQL's foreign-key check
 * does while a row that references it is being inserted (a lease, a command, an order). Closing it
 * rolls the transaction back.
 */
public final class KeyShareLock implements AutoCloseable {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private final Connection connection;

    private KeyShareLock(Connection connection) {
        this.connection = connection;
    }

    /** Holds the row of {@code table} whose {@code column} is {@code key} until {@link #close()}. */
    public static KeyShareLock on(ConnectionFactory connections, String table, String column, Object key) {
        Connection c = Mono.from(connections.create()).block(BOUND);
        KeyShareLock lock = new KeyShareLock(c);
        try {
            Mono.from(c.beginTransaction())
                    .thenMany(Flux.from(c.createStatement(
                                            "SELECT 1 FROM " + table + " WHERE " + column + " = $1 FOR KEY SHARE")
                                    .bind("$1", key)
                                    .execute())
                            .flatMap(r -> r.map((row, meta) -> row.get(0))))
                    .then()
                    .block(BOUND);
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
        return lock;
    }

    @Override
    public void close() {
        Mono.from(connection.rollbackTransaction())
                .then(Mono.from(connection.close()))
                .block(BOUND);
    }
}
