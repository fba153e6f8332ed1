package io.kvreuse.selection;

import io.netty.channel.EventLoop;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

/**
 * Where a selection's deadline timer runs: on the event loop of the request's own connection. The
 * selection arms it from that loop, which queues it without a lock; Reactor's shared timer pools
 * take a lock per timer and per cancel, and event loops and database threads that met there waited
 * behind a holder that had lost its core, for 10 ms and more on a busy machine.
 */
final class DeadlineTimers {

    private static final Map<EventLoop, Scheduler> LOOPS = new ConcurrentHashMap<>();

    private DeadlineTimers() {}

    /** The exchange's event loop as a scheduler, or Reactor's parallel one off a Netty connection. */
    static Scheduler of(ServerWebExchange exchange) {
        Object request;
        try {
            request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        } catch (IllegalArgumentException | IllegalStateException notAServerRequest) {
            // a request no server decoded (a mock, a test slice) has no connection to time on
            return Schedulers.parallel();
        }
        if (request instanceof Connection connection) {
            return LOOPS.computeIfAbsent(
                    connection.channel().eventLoop(),
                    loop -> Schedulers.fromExecutorService(loop, "selection-deadline"));
        }
        return Schedulers.parallel();
    }
}
