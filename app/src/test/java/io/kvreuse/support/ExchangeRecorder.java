package io.kvreuse.support;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.HttpHandlerDecoratorFactory;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Records the requests the application really answered, as the server saw them, while a test has
 * recording on; off (the default) it passes every exchange through untouched.
 */
public final class ExchangeRecorder implements HttpHandlerDecoratorFactory {

    /** One answered request: what came in and what went out. */
    public record Exchange(
            String method,
            String path,
            @Nullable String query,
            @Nullable String requestBody,
            int status,
            @Nullable String contentType,
            String responseBody) {}

    private volatile @Nullable List<Exchange> recording;

    /** Starts recording; what was recorded before is dropped. */
    public void start() {
        recording = java.util.Collections.synchronizedList(new ArrayList<>());
    }

    /** Stops recording and returns what was recorded. */
    public List<Exchange> stop() {
        List<Exchange> done = recording;
        recording = null;
        return done == null ? List.of() : List.copyOf(done);
    }

    @Override
    public HttpHandler apply(HttpHandler handler) {
        return (request, response) -> {
            List<Exchange> into = recording;
            if (into == null || !request.getPath().value().startsWith("/api/")) {
                return handler.handle(request, response);
            }
            StringBuilder in = new StringBuilder();
            StringBuilder out = new StringBuilder();
            var req = new ServerHttpRequestDecorator(request) {
                @Override
                public Flux<DataBuffer> getBody() {
                    return super.getBody().doOnNext(b -> in.append(text(b)));
                }
            };
            var res = new ServerHttpResponseDecorator(response) {
                @Override
                public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
                    return DataBufferUtils.join(Flux.from(body)).flatMap(joined -> {
                        out.append(text(joined));
                        return super.writeWith(Mono.just(joined));
                    });
                }
            };
            return handler.handle(req, res)
                    .doFinally(signal -> into.add(new Exchange(
                            request.getMethod().name(),
                            request.getPath().value(),
                            request.getURI().getRawQuery(),
                            in.isEmpty() ? null : in.toString(),
                            response.getStatusCode() == null
                                    ? 200
                                    : response.getStatusCode().value(),
                            response.getHeaders().getContentType() == null
                                    ? null
                                    : response.getHeaders().getContentType().toString(),
                            out.toString())));
        };
    }

    private static String text(DataBuffer b) {
        return b.toString(b.readPosition(), b.readableByteCount(), StandardCharsets.UTF_8);
    }
}
