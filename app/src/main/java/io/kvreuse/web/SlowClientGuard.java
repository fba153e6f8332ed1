package io.kvreuse.web;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Applies {@link HttpServerLimits} to the Netty server: Reactor Netty's idle and request-body
 * timeouts, a header-read timeout of our own ({@link HeaderReadTimeout}: Reactor Netty has none), and
 * a bound on open connections. Closed connections are counted by reason in
 * {@code kvreuse.http.connections.closed}; {@code kvreuse.http.connections.open} is the gauge.
 */
@Component
class SlowClientGuard implements NettyServerCustomizer {

    private final HttpServerLimits limits;
    private final AtomicInteger open = new AtomicInteger();
    private final Counter overLimit;
    private final Counter headersTooSlow;

    SlowClientGuard(HttpServerLimits limits, MeterRegistry meters) {
        this.limits = limits;
        Gauge.builder("kvreuse.http.connections.open", open, AtomicInteger::get)
                .description("open HTTP connections")
                .register(meters);
        this.overLimit = closed(meters, "max-connections");
        this.headersTooSlow = closed(meters, "header-read-timeout");
    }

    private static Counter closed(MeterRegistry meters, String reason) {
        return Counter.builder("kvreuse.http.connections.closed")
                .description("HTTP connections the server closed to protect itself")
                .tag("reason", reason)
                .register(meters);
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.idleTimeout(limits.idleTimeout())
                .requestTimeout(limits.bodyReadTimeout())
                .doOnChannelInit((observer, channel, remote) -> guard(channel));
    }

    private void guard(Channel channel) {
        if (open.incrementAndGet() > limits.maxConnections()) {
            open.decrementAndGet();
            overLimit.increment();
            channel.close();
            return;
        }
        channel.closeFuture().addListener(f -> open.decrementAndGet());
        if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
            HeaderReadTimeout.install(channel.pipeline(), limits.headerReadTimeout(), headersTooSlow::increment);
        }
    }
}
