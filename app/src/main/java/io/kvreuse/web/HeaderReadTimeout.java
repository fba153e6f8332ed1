package io.kvreuse.web;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;

/**
 * Closes a connection whose request headers do not arrive in time: from the connection's accept, or
 * from the first bytes of a later request on a kept-alive connection, until the HTTP codec has decoded
 * the request line and headers. Two handlers share one connection's state, all on its event loop:
 * one before the codec sees raw bytes (a request begins), one after it sees decoded requests (its
 * headers are complete) and the last part of each answer (the connection is between requests again).
 */
final class HeaderReadTimeout {

    private final long timeoutNanos;
    private final Runnable onTimeout;
    private @Nullable ScheduledFuture<?> timer;
    private boolean awaitingHeaders = true;
    private int unanswered;

    private HeaderReadTimeout(Duration timeout, Runnable onTimeout) {
        this.timeoutNanos = timeout.toNanos();
        this.onTimeout = onTimeout;
    }

    static void install(ChannelPipeline pipeline, Duration timeout, Runnable onTimeout) {
        HeaderReadTimeout state = new HeaderReadTimeout(timeout, onTimeout);
        pipeline.addBefore(NettyPipeline.HttpCodec, "kvreuse.requestStart", state.new RequestStart());
        pipeline.addAfter(NettyPipeline.HttpCodec, "kvreuse.requestHeaders", state.new RequestHeaders());
    }

    private void arm(ChannelHandlerContext ctx) {
        if (timer == null && ctx.channel().isActive()) {
            timer = ctx.executor().schedule(() -> expire(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void disarm() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (awaitingHeaders) {
            onTimeout.run();
            ctx.channel().close();
        }
    }

    /** Before the codec: a connection that opens, or bytes that begin a request, start the clock. */
    private final class RequestStart extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            arm(ctx);
            super.channelActive(ctx);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            if (ctx.channel().isActive()) {
                arm(ctx);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (msg instanceof ByteBuf b && b.isReadable() && unanswered == 0 && !awaitingHeaders) {
                awaitingHeaders = true;
                arm(ctx);
            }
            super.channelRead(ctx, msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            disarm();
            super.channelInactive(ctx);
        }
    }

    /** After the codec: complete headers stop the clock; the end of the last answer waits for the next request. */
    private final class RequestHeaders extends ChannelDuplexHandler {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (msg instanceof HttpRequest) {
                unanswered++;
                awaitingHeaders = false;
                disarm();
            }
            super.channelRead(ctx, msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (msg instanceof LastHttpContent && unanswered > 0) {
                unanswered--;
            }
            super.write(ctx, msg, promise);
        }
    }
}
