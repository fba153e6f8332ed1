package io.kvreuse.web;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.json.JsonMapper;

/** Installs {@link RequestHeadProblems} on every HTTP/1.1 connection of the server. */
@Component
class RequestHeadProblemsCustomizer implements NettyServerCustomizer {

    static final String HANDLER = "kvreuse.requestHeadProblems";

    private final JsonMapper json;

    RequestHeadProblemsCustomizer(JsonMapper json) {
        this.json = json;
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.HttpCodec) != null
                    && channel.pipeline().get(HANDLER) == null) {
                channel.pipeline()
                        .addAfter(NettyPipeline.HttpCodec, HANDLER, new RequestHeadProblems(json::writeValueAsBytes));
            }
        });
    }
}
