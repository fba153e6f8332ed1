package io.kvreuse.selection;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

class DeadlineTimersTests {

    @Test
    void aDeadlineIsTimedOnTheEventLoopThatServesTheRequest() throws Exception {
        CompletableFuture<String> handledOn = new CompletableFuture<>();
        CompletableFuture<String> firedOn = new CompletableFuture<>();
        var handler = WebHttpHandlerBuilder.webHandler(exchange -> {
                    handledOn.complete(Thread.currentThread().getName());
                    var timers = DeadlineTimers.of(exchange);
                    assertThat(timers).isNotSameAs(Schedulers.parallel());
                    return Mono.never()
                            .timeout(Duration.ofMillis(20), timers)
                            .onErrorResume(e -> {
                                firedOn.complete(Thread.currentThread().getName());
                                return Mono.empty();
                            })
                            .then();
                })
                .build();
        DisposableServer server = HttpServer.create()
                .port(0)
                .handle(new ReactorHttpHandlerAdapter(handler))
                .bindNow();
        try {
            HttpClient.create()
                    .port(server.port())
                    .get()
                    .uri("/api/v1/donor-selections")
                    .response()
                    .block(Duration.ofSeconds(10));
            assertThat(firedOn.get(10, TimeUnit.SECONDS))
                    .as("the timer fired on the request's own event loop, not on Reactor's parallel pool")
                    .isEqualTo(handledOn.get(10, TimeUnit.SECONDS))
                    .doesNotStartWith("parallel");
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void offANettyConnectionTheParallelSchedulerTimesIt() {
        var exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/api/v1/donor-selections"));
        assertThat(DeadlineTimers.of(exchange)).isSameAs(Schedulers.parallel());
    }
}
