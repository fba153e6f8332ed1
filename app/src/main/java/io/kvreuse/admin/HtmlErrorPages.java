package io.kvreuse.admin;

import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** Renders the HTML error page for browsers, from error handlers that run outside any controller. */
@Component
class HtmlErrorPages {

    private final ServerResponse.Context context;

    HtmlErrorPages(ServerCodecConfigurer codecs, ObjectProvider<ViewResolver> views) {
        this.context = new ServerResponse.Context() {
            @Override
            public List<HttpMessageWriter<?>> messageWriters() {
                return codecs.getWriters();
            }

            @Override
            public List<ViewResolver> viewResolvers() {
                return views.orderedStream().toList();
            }
        };
    }

    Mono<Void> render(ServerWebExchange exchange, HttpStatus status, String title, String detail) {
        Map<String, Object> model = Map.of(
                "status", status.value(),
                "reason", status.getReasonPhrase(),
                "title", title,
                "detail", detail,
                "path", exchange.getRequest().getPath().value());
        return ServerResponse.status(status)
                .contentType(MediaType.TEXT_HTML)
                .header("Cache-Control", "no-store")
                .render("error/page", model)
                .flatMap(response -> response.writeTo(exchange, context));
    }
}
