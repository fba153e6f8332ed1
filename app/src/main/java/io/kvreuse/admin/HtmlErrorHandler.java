package io.kvreuse.admin;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.web.Problems;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.annotation.Order;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.resource.NoResourceFoundException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Error pages for browsers. Runs before the API's problem handler and takes only what a browser
 * asked for: the dashboard's pages, sign-in and sign-out, and other non-API paths requested as
 * HTML. API paths and the dashboard's JSON endpoints always pass on to problem JSON.
 */
@Component
@Order(-3)
class HtmlErrorHandler implements WebExceptionHandler {

    private static final Log log = LogFactory.getLog(HtmlErrorHandler.class);
    private static final List<String> JSON_PREFIXES =
            List.of("/api/", "/actuator", "/v3/", "/swagger-ui", "/webjars/swagger-ui", "/admin/api/");

    private final HtmlErrorPages pages;

    HtmlErrorHandler(HtmlErrorPages pages) {
        this.pages = pages;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        if (exchange.getResponse().isCommitted() || !wantsHtml(exchange)) {
            return Mono.error(ex);
        }
        Page page = toPage(ex);
        String where =
                exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath();
        if (page.status().is5xxServerError()) {
            log.error(where + " failed", ex);
        } else {
            log.warn(where + " -> " + page.status().value() + ": " + page.detail());
        }
        return pages.render(exchange, page.status(), page.title(), page.detail());
    }

    static boolean wantsHtml(ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().value();
        if (JSON_PREFIXES.stream().anyMatch(path::startsWith)) {
            return false;
        }
        if (path.startsWith("/admin") || path.startsWith("/login") || path.startsWith("/logout")) {
            return true;
        }
        return exchange.getRequest().getHeaders().getAccept().stream()
                .anyMatch(MediaType.TEXT_HTML::equalsTypeAndSubtype);
    }

    static Page toPage(Throwable ex) {
        return switch (ex) {
            case KvReuseException e -> new Page(status(e), e.title(), String.valueOf(e.getMessage()));
            case NoResourceFoundException e ->
                new Page(HttpStatus.NOT_FOUND, "Page not found", "There is no page at this address.");
            case ServerWebInputException e ->
                new Page(
                        HttpStatus.BAD_REQUEST,
                        "Invalid request",
                        e.getMethodParameter() != null
                                ? "Parameter '" + e.getMethodParameter().getParameterName()
                                        + "' is missing or malformed."
                                : "The request could not be read.");
            case ResponseStatusException e -> statusPage(e);
            case AccessDeniedException e ->
                new Page(HttpStatus.FORBIDDEN, "Forbidden", "Only operators may use the dashboard.");
            case DataAccessResourceFailureException e -> storeDown();
            case TransientDataAccessException e -> storeDown();
            default ->
                isStoreFailure(ex)
                        ? storeDown()
                        : new Page(
                                HttpStatus.INTERNAL_SERVER_ERROR,
                                "Something went wrong",
                                "An unexpected error occurred; it has been logged.");
        };
    }

    private static Page statusPage(ResponseStatusException e) {
        HttpStatus status = HttpStatus.resolve(e.getStatusCode().value());
        HttpStatus s = status == null ? HttpStatus.INTERNAL_SERVER_ERROR : status;
        return new Page(s, s.getReasonPhrase(), e.getReason() == null ? s.getReasonPhrase() : e.getReason());
    }

    private static HttpStatus status(KvReuseException e) {
        return Problems.status(e.type());
    }

    private static Page storeDown() {
        return new Page(
                HttpStatus.SERVICE_UNAVAILABLE,
                "Database unavailable",
                "PostgreSQL is temporarily unavailable. Reload the page in a moment.");
    }

    private static boolean isStoreFailure(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            String name = t.getClass().getName();
            if (name.startsWith("io.r2dbc.spi.R2dbcNonTransientResource")
                    || name.startsWith("io.r2dbc.spi.R2dbcTransient")
                    || t instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    /** What the error page says. */
    record Page(HttpStatus status, String title, String detail) {}
}
