package io.kvreuse.web;

import io.kvreuse.web.Problems.Problem;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** Writes a problem document to a response; shared by the API error handler and security. */
@Component
public class ProblemWriter {

    private final JsonMapper json;

    ProblemWriter(JsonMapper json) {
        this.json = json;
    }

    public Mono<Void> write(ServerWebExchange exchange, Problem problem) {
        var response = exchange.getResponse();
        response.setStatusCode(problem.status());
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] bytes = json.writeValueAsBytes(
                problem.body(exchange.getRequest().getPath().value()));
        DataBuffer buffer = response.bufferFactory().wrap(bytes);
        return response.writeWith(Mono.just(buffer));
    }
}
