package io.kvreuse.store;

import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Wrapped;
import java.time.Duration;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.retry.Retry;

/**
 * PostgreSQL LISTEN/NOTIFY for the replicas' change feeds, on one dedicated connection outside the
 * pool. After every (re)connect it emits {@link #RESYNC}: notifications may have been missed, so
 * subscribers reload what they cache.
 */
@Component
public class PgNotifications implements SmartLifecycle {

    /** Channel of the reuse-settings document; the payload is its version. */
    public static final String SETTINGS = "kvreuse_settings";
    /** Channel of inventory and bank changes; the payload is a change-feed id. */
    public static final String INVENTORY = "kvreuse_inventory";
    /** Channel of incarnation, domain and cost-model changes; the payload names the row. */
    public static final String FLEET = "kvreuse_fleet";
    /** Channel of engine commands; the payload is the incarnation id that has new commands. */
    public static final String COMMANDS = "kvreuse_commands";
    /** Channel of transfer orders; the payload is the host whose agent has a new order. */
    public static final String ORDERS = "kvreuse_orders";
    /** Pseudo-channel emitted after a (re)connect. */
    public static final String RESYNC = "";

    private static final List<String> CHANNELS = List.of(SETTINGS, INVENTORY, FLEET, COMMANDS, ORDERS);
    private static final Log log = LogFactory.getLog(PgNotifications.class);

    private final ConnectionFactory factory;
    private final Sinks.Many<Notification> sink = Sinks.many().multicast().directBestEffort();
    private volatile Disposable subscription;

    PgNotifications(ConnectionFactory factory) {
        this.factory = factory instanceof Wrapped<?> w && w.unwrap() instanceof ConnectionFactory raw ? raw : factory;
    }

    /** Notifications of one channel, plus {@link #RESYNC} signals. */
    public Flux<Notification> channel(String channel) {
        return sink.asFlux()
                .filter(n -> n.channel().equals(channel) || n.channel().equals(RESYNC));
    }

    @Override
    public void start() {
        subscription = Mono.from(factory.create())
                .cast(PostgresqlConnection.class)
                .flatMapMany(this::listen)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(200))
                        .maxBackoff(Duration.ofSeconds(2))
                        .doBeforeRetry(r -> log.warn("change feed connection lost, reconnecting: "
                                + r.failure().getMessage())))
                .subscribe(sink::tryEmitNext);
    }

    private Flux<Notification> listen(PostgresqlConnection connection) {
        Flux<Void> listens = Flux.fromIterable(CHANNELS)
                .concatMap(ch -> connection
                        .createStatement("LISTEN " + ch)
                        .execute()
                        .flatMap(r -> r.getRowsUpdated())
                        .then());
        return listens.thenMany(Flux.concat(
                        Mono.just(new Notification(RESYNC, "")),
                        connection
                                .getNotifications()
                                .map(n -> new Notification(n.getName(), String.valueOf(n.getParameter())))))
                .concatWith(Mono.error(new IllegalStateException("notification stream ended")))
                .doFinally(signal -> Mono.from(connection.close()).subscribe(null, e -> {}));
    }

    @Override
    public void stop() {
        Disposable s = subscription;
        if (s != null) {
            s.dispose();
        }
    }

    @Override
    public boolean isRunning() {
        Disposable s = subscription;
        return s != null && !s.isDisposed();
    }

    /** One notification: its channel and payload. */
    public record Notification(String channel, String payload) {}
}
