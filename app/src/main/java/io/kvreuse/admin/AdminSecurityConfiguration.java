package io.kvreuse.admin;

import io.kvreuse.error.ProblemType;
import io.kvreuse.security.OperatorLogin;
import io.kvreuse.web.ProblemWriter;
import io.kvreuse.web.Problems.Problem;
import java.net.URI;
import java.time.Clock;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.DelegatingServerAuthenticationEntryPoint;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.authentication.RedirectServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authentication.logout.DelegatingServerLogoutHandler;
import org.springframework.security.web.server.authentication.logout.RedirectServerLogoutSuccessHandler;
import org.springframework.security.web.server.authentication.logout.SecurityContextServerLogoutHandler;
import org.springframework.security.web.server.authentication.logout.WebSessionServerLogoutHandler;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.context.WebSessionServerSecurityContextRepository;
import org.springframework.security.web.server.header.XFrameOptionsServerHttpHeadersWriter;
import org.springframework.security.web.server.savedrequest.WebSessionServerRequestCache;
import org.springframework.security.web.server.util.matcher.PathPatternParserServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import org.springframework.web.server.session.CookieWebSessionIdResolver;
import org.springframework.web.server.session.DefaultWebSessionManager;
import org.springframework.web.server.session.WebSessionManager;

/**
 * The admin UI's security, a second chain after the API's: sign-in with an OPERATOR token into a
 * server-side session, CSRF on every form, an idle timeout, sign-out. Everything the API chain does
 * not match ends up here; only {@code /admin/**} requires a signed-in operator.
 */
@Configuration(proxyBeanMethods = false)
class AdminSecurityConfiguration {

    static final String SESSION_COOKIE = "KVREUSE_SESSION";
    private static final ServerWebExchangeMatcher ADMIN_JSON =
            new PathPatternParserServerWebExchangeMatcher("/admin/api/**");
    private static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            + "img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

    @Bean
    @Order(2)
    SecurityWebFilterChain adminSecurity(
            ServerHttpSecurity http,
            OperatorLogin login,
            SignInEvents signIns,
            ProblemWriter problems,
            HtmlErrorPages pages) {
        var contexts = new WebSessionServerSecurityContextRepository();
        var requests = new WebSessionServerRequestCache();
        var loginFilter = new AuthenticationWebFilter(authenticationManager(login));
        loginFilter.setRequiresAuthenticationMatcher(ServerWebExchangeMatchers.pathMatchers(HttpMethod.POST, "/login"));
        loginFilter.setServerAuthenticationConverter(new TokenLoginConverter());
        loginFilter.setSecurityContextRepository(contexts);
        loginFilter.setAuthenticationSuccessHandler(signIns.successHandler(requests));
        loginFilter.setAuthenticationFailureHandler(signIns.failureHandler());

        ServerAccessDeniedHandler denied = accessDenied(problems, pages);
        return http.securityContextRepository(contexts)
                .csrf(csrf -> csrf.accessDeniedHandler(denied))
                .requestCache(cache -> cache.requestCache(requests))
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .addFilterAt(loginFilter, SecurityWebFiltersOrder.FORM_LOGIN)
                .addFilterAfter(new RevokedTokenFilter(login, contexts), SecurityWebFiltersOrder.AUTHENTICATION)
                .logout(logout -> logout.logoutUrl("/logout")
                        .logoutHandler(new DelegatingServerLogoutHandler(
                                signIns.logoutHandler(),
                                new SecurityContextServerLogoutHandler(),
                                new WebSessionServerLogoutHandler()))
                        .logoutSuccessHandler(loggedOut()))
                .exceptionHandling(
                        e -> e.authenticationEntryPoint(entryPoint(problems)).accessDeniedHandler(denied))
                .headers(h -> h.contentSecurityPolicy(csp -> csp.policyDirectives(CSP))
                        .frameOptions(f -> f.mode(XFrameOptionsServerHttpHeadersWriter.Mode.DENY)))
                .authorizeExchange(auth -> auth.pathMatchers("/admin", "/admin/**")
                        .hasRole("OPERATOR")
                        .anyExchange()
                        .permitAll())
                .build();
    }

    /** Browser sessions: an HttpOnly, SameSite=Lax cookie and the configured idle timeout. */
    @Bean(WebHttpHandlerBuilder.WEB_SESSION_MANAGER_BEAN_NAME)
    WebSessionManager webSessionManager(AdminProperties props, Clock clock) {
        var cookies = new CookieWebSessionIdResolver();
        cookies.setCookieName(SESSION_COOKIE);
        cookies.addCookieInitializer(
                c -> c.path("/").httpOnly(true).sameSite("Lax").secure(props.secureCookie()));
        var manager = new DefaultWebSessionManager();
        manager.setSessionIdResolver(cookies);
        manager.setSessionStore(new AdminSessionStore(props.sessionIdleTimeout(), props.maxSessions(), clock));
        return manager;
    }

    private static ReactiveAuthenticationManager authenticationManager(OperatorLogin login) {
        return authentication -> login.authenticate(String.valueOf(authentication.getCredentials()));
    }

    private static RedirectServerLogoutSuccessHandler loggedOut() {
        var handler = new RedirectServerLogoutSuccessHandler();
        handler.setLogoutSuccessUrl(URI.create("/login?logout"));
        return handler;
    }

    /** The dashboard's JSON endpoints answer 401 problems; pages redirect to the sign-in form. */
    private static ServerAuthenticationEntryPoint entryPoint(ProblemWriter problems) {
        ServerAuthenticationEntryPoint json = (exchange, ex) -> problems.write(
                exchange, new Problem(ProblemType.UNAUTHORIZED, "sign in to the admin dashboard at /login"));
        var pages = new RedirectServerAuthenticationEntryPoint("/login");
        var delegating = new DelegatingServerAuthenticationEntryPoint(
                List.of(new DelegatingServerAuthenticationEntryPoint.DelegateEntry(ADMIN_JSON, json)));
        delegating.setDefaultEntryPoint(pages);
        return delegating;
    }

    private static ServerAccessDeniedHandler accessDenied(ProblemWriter problems, HtmlErrorPages pages) {
        return (exchange, denied) -> ADMIN_JSON
                .matches(exchange)
                .flatMap(match -> match.isMatch()
                        ? problems.write(exchange, new Problem(ProblemType.FORBIDDEN, denied.getMessage()))
                        : pages.render(exchange, HttpStatus.FORBIDDEN, "Forbidden", forbiddenDetail(denied)));
    }

    private static String forbiddenDetail(Exception denied) {
        if (denied instanceof org.springframework.security.web.server.csrf.CsrfException) {
            return "The form was not sent by this dashboard or has expired (missing or invalid CSRF token). "
                    + "Nothing was changed. Reload the page and try again.";
        }
        return "Only operators may use the dashboard.";
    }
}
