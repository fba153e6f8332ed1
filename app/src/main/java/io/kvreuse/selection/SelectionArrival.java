package io.kvreuse.selection;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Notes when a selection request arrived, before authentication and body decoding, so its {@code
 * deadlineMs} is counted from there: what the router measures, not just the selection's own work.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class SelectionArrival implements WebFilter {

    static final String ATTRIBUTE = SelectionArrival.class.getName() + ".nanos";

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (exchange.getRequest().getPath().value().startsWith("/api/v1/donor-selections")) {
            exchange.getAttributes().put(ATTRIBUTE, System.nanoTime());
        }
        return chain.filter(exchange);
    }

    /** When the exchange arrived (System.nanoTime), or now if it was not noted. */
    static long of(ServerWebExchange exchange) {
        Long arrived = exchange.getAttribute(ATTRIBUTE);
        return arrived == null ? System.nanoTime() : arrived;
    }
}
