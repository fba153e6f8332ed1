package io.kvreuse.web;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.StoreFailures;
import io.kvreuse.web.Problems.Problem;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.Order;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.support.WebExchangeBindException;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.NotAcceptableStatusException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.util.DisconnectedClientHelper;
import reactor.core.publisher.Mono;

/**
 * Renders every error of the JSON API as {@code application/problem+json}. Runs before Boot's
 * default handler; browser pages of the admin UI are left to their own HTML error handling. A client
 * that went away (closed mid-body, reset the connection) is nobody's error: it gets no answer, is
 * logged at DEBUG, counted in {@code kvreuse.http.client.aborts} and shows in
 * {@code http.server.requests} with outcome UNKNOWN, never as a 500.
 */
@Component
@Order(-2)
class ProblemWebExceptionHandler implements WebExceptionHandler {

    private static final Log log = LogFactory.getLog(ProblemWebExceptionHandler.class);

    private final ProblemWriter writer;
    private final Counter clientAborts;

    ProblemWebExceptionHandler(ProblemWriter writer, MeterRegistry meters) {
        this.writer = writer;
        this.clientAborts = Counter.builder("kvreuse.http.client.aborts")
                .description("requests whose client closed the connection before the answer (e.g. mid-body)")
                .register(meters);
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        if (clientWentAway(exchange, ex)) {
            return clientAborted(exchange, ex);
        }
        if (exchange.getResponse().isCommitted() || isBrowserPage(exchange)) {
            return Mono.error(ex);
        }
        Problem problem = toProblem(ex);
        String where =
                exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath();
        if (problem.status().is5xxServerError()) {
            log.error(where + " failed: " + problem.slug(), ex);
        } else {
            log.warn(where + " -> " + problem.status().value() + " " + problem.slug() + ": " + problem.detail());
        }
        if (problem.status() == HttpStatus.REQUEST_TIMEOUT) {
            exchange.getResponse().getHeaders().set("Connection", "close"); // the rest of the body is not awaited
        }
        if (problem.status() == HttpStatus.SERVICE_UNAVAILABLE) {
            exchange.getResponse().getHeaders().set("Retry-After", "1");
        }
        return writer.write(exchange, problem);
    }

    /**
     * The client went away. Spring's test reads any reactor-netty {@code AbortedException}, "connection
     * reset by peer" or "broken pipe" among the causes as the client's, but PostgreSQL's connection
     * fails with the very same exceptions when the database stops, and a transaction that could not
     * begin on it arrives untranslated ({@code CannotCreateTransactionException} over the driver's
     * exception). Taken for an abort, the exchange ended with an empty 200 to a client that was still
     * there and took it for success: an engine's commit or a node agent's part report that was never
     * written. So a failure with the store or a transaction among its causes is the store's (503),
     * and a client whose connection is still open has not gone away, whatever the exception says.
     */
    static boolean clientWentAway(ServerWebExchange exchange, Throwable ex) {
        return DisconnectedClientHelper.isClientDisconnectedException(ex)
                && !fromTheStore(ex)
                && !clientStillConnected(exchange);
    }

    static boolean fromTheStore(Throwable ex) {
        if (StoreFailures.isStoreFailure(ex)) {
            return true;
        }
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof io.r2dbc.spi.R2dbcException
                    || t instanceof org.springframework.transaction.TransactionException
                    || t instanceof org.springframework.dao.DataAccessException) {
                return true;
            }
        }
        return false;
    }

    /** Whether the client's connection is still open; false when the server cannot tell. */
    private static boolean clientStillConnected(ServerWebExchange exchange) {
        try {
            Object response = ServerHttpResponseDecorator.getNativeResponse(exchange.getResponse());
            return response instanceof reactor.netty.Connection c && c.channel().isActive();
        } catch (RuntimeException noNativeResponse) {
            return false;
        }
    }

    /** Nobody is left to answer: count it, and let the exchange end quietly. */
    private Mono<Void> clientAborted(ServerWebExchange exchange, Throwable ex) {
        clientAborts.increment();
        ServerRequestObservationContext.findCurrent(exchange.getAttributes())
                .ifPresent(c -> c.setConnectionAborted(true));
        if (log.isDebugEnabled()) {
            log.debug(exchange.getRequest().getMethod() + " "
                    + exchange.getRequest().getPath() + ": the client closed the connection before the answer: " + ex);
        }
        return Mono.empty();
    }

    private static boolean isBrowserPage(ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().value();
        // the dashboard's own JSON endpoints (/admin/api/**) answer problems like the API
        return (path.startsWith("/admin") && !path.startsWith("/admin/api/"))
                || path.startsWith("/login")
                || path.startsWith("/logout");
    }

    static Problem toProblem(Throwable ex) {
        return switch (ex) {
            case KvReuseException e -> Problems.of(e);
            // Reactor Netty's body timeout (kvreuse.http.body-read-timeout); its exception type is not public
            case Throwable e
            when hasCauseNamed(e, "reactor.netty.http.server.RequestTimeoutException") ->
                new Problem(
                        ProblemType.REQUEST_TIMEOUT,
                        "the request body did not arrive within kvreuse.http.body-read-timeout");
            case WebExchangeBindException e -> Problems.invalidFields(fieldErrors(e));
            case ServerWebInputException e -> inputProblem(e);
            case UnsupportedMediaTypeStatusException e ->
                new Problem(ProblemType.UNSUPPORTED_MEDIA_TYPE, "send application/json");
            case NotAcceptableStatusException e -> new Problem(ProblemType.NOT_ACCEPTABLE, e.getReason());
            case MethodNotAllowedException e ->
                new Problem(
                        ProblemType.METHOD_NOT_ALLOWED,
                        e.getHttpMethod() + " is not supported here; allowed: " + e.getSupportedMethods());
            case org.springframework.web.reactive.resource.NoResourceFoundException e ->
                new Problem(ProblemType.NOT_FOUND, "no such endpoint");
            // WebFlux reports a path variable that converts to null (e.g. a blank id) as a server error
            case org.springframework.web.server.ServerErrorException e
            when isPathVariable(e) ->
                new Problem(
                        ProblemType.INVALID_PARAMETER,
                        "parameter '" + e.getMethodParameter().getParameterName() + "' is missing or malformed");
            case ResponseStatusException e -> statusProblem(e.getStatusCode(), e.getReason());
            case AccessDeniedException e ->
                new Problem(ProblemType.FORBIDDEN, "this token's role does not allow the call");
            case DataAccessResourceFailureException e -> storeUnavailable();
            // no connection, or none that could begin a transaction: the store's, whatever the driver said
            case org.springframework.transaction.CannotCreateTransactionException e -> storeUnavailable();
            case TransientDataAccessException e -> storeUnavailable();
            case DataIntegrityViolationException e ->
                new Problem(ProblemType.CONFLICT, "the request conflicts with stored state");
            // SQLSTATE class 22 (data exception: a value PostgreSQL cannot take, e.g. an unsupported
            // character, a number out of range) comes from request data, never from the store
            // being down; the transaction rolled back
            case Throwable e
            when sqlState(e).startsWith("22") ->
                new Problem(
                        ProblemType.INVALID_VALUE,
                        "a value in the request cannot be stored (SQLSTATE " + sqlState(e) + ")");
            default ->
                io.kvreuse.store.StoreFailures.isStoreFailure(ex)
                        ? storeUnavailable()
                        : new Problem(ProblemType.INTERNAL_ERROR, "an unexpected error occurred; it has been logged");
        };
    }

    private static boolean isPathVariable(org.springframework.web.server.ServerErrorException e) {
        return e.getMethodParameter() != null
                && e.getMethodParameter()
                        .hasParameterAnnotation(org.springframework.web.bind.annotation.PathVariable.class);
    }

    private static Problem inputProblem(ServerWebInputException e) {
        if (hasCause(e, DataBufferLimitException.class)) {
            return new Problem(ProblemType.PAYLOAD_TOO_LARGE, "the request body exceeds the configured limit");
        }
        if (e.getMethodParameter() != null && !hasCause(e, DecodingException.class)) {
            String name = e.getMethodParameter().getParameterName();
            return new Problem(ProblemType.INVALID_PARAMETER, "parameter '" + name + "' is missing or malformed");
        }
        return new Problem(ProblemType.MALFORMED_REQUEST, JsonErrors.describe(e));
    }

    /** A framework's bare status: the catalogue's any-operation problem of that status. */
    private static Problem statusProblem(HttpStatusCode code, @Nullable String reason) {
        ProblemType type = ProblemType.forStatus(code.value());
        return type == ProblemType.PAYLOAD_TOO_LARGE
                ? new Problem(type, "the request body exceeds the configured limit")
                : new Problem(type, reason);
    }

    static Problem storeUnavailable() {
        return new Problem(ProblemType.STORE_UNAVAILABLE, "PostgreSQL is temporarily unavailable; retry")
                .with("retryable", true);
    }

    private static String sqlState(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof io.r2dbc.spi.R2dbcException r && r.getSqlState() != null) {
                return r.getSqlState();
            }
        }
        return "";
    }

    private static boolean hasCauseNamed(Throwable ex, String type) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t.getClass().getName().equals(type)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasCause(Throwable ex, Class<? extends Throwable> type) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static List<Problems.FieldError> fieldErrors(WebExchangeBindException e) {
        List<Problems.FieldError> errors = new ArrayList<>();
        e.getFieldErrors()
                .forEach(f -> errors.add(new Problems.FieldError(f.getField(), String.valueOf(f.getDefaultMessage()))));
        e.getGlobalErrors()
                .forEach(g ->
                        errors.add(new Problems.FieldError(g.getObjectName(), String.valueOf(g.getDefaultMessage()))));
        return errors;
    }

    static MediaType problemJson() {
        return MediaType.APPLICATION_PROBLEM_JSON;
    }
}
