package io.kvreuse.web;

import io.kvreuse.error.ProblemType;
import io.kvreuse.web.Problems.Problem;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Turns the bare answers Reactor Netty sends for a request head it could not decode — 414 for a
 * request line over the limit, 431 for headers over it, 400 for malformed headers — into problem
 * documents like every other error. One per connection, just after the HTTP codec: it sees the
 * decoder's failure on the way in and the empty answer to it on the way out. Nothing of the
 * request is echoed (it is too long or malformed by definition).
 */
final class RequestHeadProblems extends ChannelDuplexHandler {

    private final Function<Map<String, Object>, byte[]> json;
    private @Nullable Throwable failure;

    RequestHeadProblems(Function<Map<String, Object>, byte[]> json) {
        this.json = json;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof HttpObject http) {
            DecoderResult result = http.decoderResult();
            if (result.isFailure()) {
                failure = result.cause();
            }
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        Throwable cause = failure;
        if (cause != null
                && msg instanceof FullHttpResponse bare
                && bare.content().readableBytes() == 0
                && !bare.headers().contains(HttpHeaderNames.CONTENT_TYPE)) {
            failure = null;
            Problem problem = problem(cause);
            byte[] body = json.apply(document(problem));
            FullHttpResponse answer =
                    new DefaultFullHttpResponse(bare.protocolVersion(), bare.status(), Unpooled.wrappedBuffer(body));
            answer.headers()
                    .set(bare.headers())
                    .set(HttpHeaderNames.CONTENT_TYPE, "application/problem+json")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            bare.release();
            super.write(ctx, answer, promise);
            return;
        }
        super.write(ctx, msg, promise);
    }

    static Problem problem(Throwable decoding) {
        Throwable cause = decoding.getCause() != null ? decoding.getCause() : decoding;
        if (cause instanceof TooLongHttpLineException) {
            return new Problem(
                    ProblemType.URI_TOO_LONG, "the request line exceeds the server's limit; shorten the URI");
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return new Problem(
                    ProblemType.REQUEST_HEADER_FIELDS_TOO_LARGE, "the request headers exceed the server's limit");
        }
        return new Problem(
                ProblemType.MALFORMED_REQUEST_HEAD, "the request line or a header cannot be parsed as HTTP/1.1");
    }

    private static Map<String, Object> document(Problem problem) {
        Map<String, Object> body = problem.body("");
        body.remove("instance");
        return body;
    }
}
