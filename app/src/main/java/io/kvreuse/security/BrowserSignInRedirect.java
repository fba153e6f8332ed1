package io.kvreuse.security;

import java.net.URI;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.server.DefaultServerRedirectStrategy;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.ServerRedirectStrategy;
import org.springframework.security.web.server.savedrequest.ServerRequestCache;
import org.springframework.security.web.server.savedrequest.WebSessionServerRequestCache;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The API's answer to a missing token, unless the request is a browser opening a link: a page
 * navigation (GET, {@code Accept: text/html}, no {@code Authorization} header) goes to the sign-in
 * form. The API docs come back after sign-in (they accept the dashboard session); any other API
 * link lands on the form with a note that the API itself takes bearer tokens. API clients, which
 * ask for JSON or send a token, keep the 401 problem.
 */
final class BrowserSignInRedirect implements ServerAuthenticationEntryPoint {

    private final ServerAuthenticationEntryPoint api;
    private final ServerRequestCache requests = new WebSessionServerRequestCache();
    private final ServerRedirectStrategy redirects = new DefaultServerRedirectStrategy();

    BrowserSignInRedirect(ServerAuthenticationEntryPoint api) {
        this.api = api;
    }

    @Override
    public Mono<Void> commence(ServerWebExchange exchange, AuthenticationException ex) {
        if (!isPageNavigation(exchange.getRequest())) {
            return api.commence(exchange, ex);
        }
        return DocsSessionContextRepository.DOCS
                .matches(exchange)
                .flatMap(docs ->
                        docs.isMatch() ? requests.saveRequest(exchange).thenReturn("/login") : Mono.just("/login?api"))
                .flatMap(location -> redirects.sendRedirect(exchange, URI.create(location)));
    }

    /** A browser loading a page: it asks for HTML by name (not only {@code *}/{@code *}) and sends no token. */
    static boolean isPageNavigation(ServerHttpRequest request) {
        HttpHeaders headers = request.getHeaders();
        if (!HttpMethod.GET.equals(request.getMethod()) || headers.containsHeader(HttpHeaders.AUTHORIZATION)) {
            return false;
        }
        try {
            return headers.getAccept().stream()
                    .anyMatch(t ->
                            "text".equals(t.getType()) && "html".equals(t.getSubtype()) && t.getQualityValue() > 0);
        } catch (org.springframework.http.InvalidMediaTypeException e) {
            return false;
        }
    }
}
