package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.transaction.CannotCreateTransactionException;
import tools.jackson.databind.json.JsonMapper;

/**
 * PostgreSQL's connection breaks with the words a client's does ("connection reset by peer",
 * "broken pipe") when the database stops. A transaction that cannot begin on such a connection is
 * the store's failure and is answered 503; answered as a client abort, the exchange ended with an
 * empty 200 that a node agent took for an acknowledged part report it then never sent again.
 */
class StoreResetAnswerTests {

    private final ProblemWebExceptionHandler handler = new ProblemWebExceptionHandler(
            new ProblemWriter(JsonMapper.builder().build()), new SimpleMeterRegistry());

    @Test
    void aTransactionThatCannotBeginOnAResetStoreConnectionIsAnswered503() {
        // as R2dbcTransactionManager.doBegin wraps what r2dbc-postgresql raises for a connection the server reset
        Throwable ex = new CannotCreateTransactionException(
                "Could not open R2DBC Connection for transaction",
                new R2dbcNonTransientResourceException(
                        "Connection closed", new IOException("recvAddress(..) failed: Connection reset by peer")));
        MockServerWebExchange exchange = report();

        handler.handle(exchange, ex).block();

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(exchange.getResponse().getBodyAsString().block()).contains("store-unavailable");
        assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
    }

    @Test
    void aBrokenPipeToTheStoreIsTheStoresFailureToo() {
        Throwable ex = new CannotCreateTransactionException(
                "Could not open R2DBC Connection for transaction",
                new R2dbcNonTransientResourceException("Cannot exchange messages", new IOException("Broken pipe")));
        MockServerWebExchange exchange = report();

        handler.handle(exchange, ex).block();

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
    }

    @Test
    void theStoreConnectionClosedBeforeSendingIsTheStoresFailure() {
        // reactor-netty's AbortedException is one of the names Spring takes for a client that went away
        Throwable ex = new CannotCreateTransactionException(
                "Could not open R2DBC Connection for transaction",
                new R2dbcNonTransientResourceException(
                        "Connection closed",
                        new reactor.netty.channel.AbortedException(
                                "Connection has been closed BEFORE send operation")));
        MockServerWebExchange exchange = report();

        handler.handle(exchange, ex).block();

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
    }

    @Test
    void aClientThatResetItsOwnConnectionIsStillAnAbortWithNoAnswer() {
        MockServerWebExchange exchange = report();

        handler.handle(exchange, new IOException("Connection reset by peer")).block();

        assertThat(exchange.getResponse().getStatusCode())
                .as("no problem written for a client that went away")
                .isNull();
        assertThat(ProblemWebExceptionHandler.fromTheStore(new IOException("Broken pipe")))
                .isFalse();
    }

    private static MockServerWebExchange report() {
        return MockServerWebExchange.from(
                MockServerHttpRequest.post("/api/v1/orders/00000000-0000-0000-0000-000000000001/parts/0"));
    }
}
