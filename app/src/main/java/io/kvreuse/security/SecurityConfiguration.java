package io.kvreuse.security;

import static io.kvreuse.security.Role.AGENT;
import static io.kvreuse.security.Role.ENGINE;
import static io.kvreuse.security.Role.OPERATOR;
import static io.kvreuse.security.Role.ROUTER;

import io.kvreuse.web.ProblemWriter;
import io.kvreuse.web.Problems.Problem;
import java.util.Arrays;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.authentication.ServerAuthenticationEntryPointFailureHandler;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import reactor.core.publisher.Mono;

/**
 * The API's security: bearer tokens, a role per endpoint family (DESIGN §7). Ownership (an engine
 * acts only on its own incarnations, an agent only for its host) is checked by each feature.
 */
@Configuration
@EnableWebFluxSecurity
class SecurityConfiguration {

    @Bean
    @Order(1)
    SecurityWebFilterChain apiSecurity(ServerHttpSecurity http, ApiTokens tokens, ProblemWriter problems) {
        var entryPoint = (org.springframework.security.web.server.ServerAuthenticationEntryPoint) (exchange, ex) -> {
            exchange.getResponse().getHeaders().set("WWW-Authenticate", "Bearer");
            return problems.write(
                    exchange,
                    new Problem(
                            HttpStatus.UNAUTHORIZED,
                            "unauthorized",
                            "Authentication required",
                            "send a valid API token as 'Authorization: Bearer <token>'"));
        };
        var bearer = new AuthenticationWebFilter(authenticationManager(tokens));
        bearer.setServerAuthenticationConverter(new BearerTokenConverter());
        bearer.setAuthenticationFailureHandler(new ServerAuthenticationEntryPointFailureHandler(entryPoint));
        bearer.setSecurityContextRepository(NoOpServerSecurityContextRepository.getInstance());

        return http.securityMatcher(ServerWebExchangeMatchers.pathMatchers(
                        "/api/**",
                        "/actuator/**",
                        "/v3/api-docs/**",
                        "/swagger-ui/**",
                        "/swagger-ui.html",
                        "/webjars/swagger-ui/**"))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
                .securityContextRepository(new DocsSessionContextRepository())
                .addFilterAt(bearer, SecurityWebFiltersOrder.AUTHENTICATION)
                .exceptionHandling(e -> e.authenticationEntryPoint(entryPoint)
                        .accessDeniedHandler((exchange, denied) -> problems.write(
                                exchange,
                                new Problem(
                                        HttpStatus.FORBIDDEN,
                                        "forbidden",
                                        "Forbidden",
                                        "this token's role does not allow the call"))))
                .authorizeExchange(this::rules)
                .build();
    }

    /**
     * Requests the firewall rejects (encoded slashes or dots, backslashes, control characters in the
     * path) answer like every other refused API call: a 400 problem, not an empty body.
     */
    @Bean
    org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler rejectedExchanges(
            ProblemWriter problems) {
        var plain = new org.springframework.security.web.server.firewall.HttpStatusExchangeRejectedHandler();
        return (exchange, rejected) -> {
            String path = exchange.getRequest().getPath().value();
            if (!path.startsWith("/api/") && !path.startsWith("/admin/api/") && !path.startsWith("/actuator")) {
                return plain.handle(exchange, rejected);
            }
            return problems.write(
                    exchange,
                    new Problem(
                            HttpStatus.BAD_REQUEST,
                            "rejected-request",
                            "Rejected request",
                            "the request URL contains characters or sequences that are not allowed"));
        };
    }

    private void rules(ServerHttpSecurity.AuthorizeExchangeSpec auth) {
        auth.pathMatchers("/actuator/health", "/actuator/health/**")
                .permitAll()
                .pathMatchers("/actuator/prometheus")
                .authenticated()
                .pathMatchers("/actuator/**")
                .hasRole(OPERATOR.name())
                .pathMatchers("/api/v1/tokens/**", "/api/v1/tokens")
                .hasRole(OPERATOR.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/domains/**", "/api/v1/domains")
                .authenticated()
                .pathMatchers("/api/v1/domains/**", "/api/v1/domains")
                .hasRole(OPERATOR.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/incarnations/*/commands")
                .hasRole(ENGINE.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/incarnations/**", "/api/v1/incarnations")
                .access(any(ENGINE, OPERATOR, AGENT))
                .pathMatchers("/api/v1/incarnations/**", "/api/v1/incarnations")
                .hasRole(ENGINE.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/banks/**")
                .access(any(ENGINE, OPERATOR, AGENT))
                // the host's agent bridges the engines' own KV event streams into their banks
                .pathMatchers(
                        HttpMethod.POST,
                        "/api/v1/banks/*/events",
                        "/api/v1/banks/*/reset",
                        "/api/v1/banks/*/parts/*/stream-breaks")
                .access(any(ENGINE, AGENT))
                .pathMatchers("/api/v1/banks/**")
                .hasRole(ENGINE.name())
                .pathMatchers("/api/v1/donor-selections/**", "/api/v1/donor-selections")
                .hasRole(ROUTER.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/settings/**")
                .authenticated()
                .pathMatchers("/api/v1/settings/**")
                .hasRole(OPERATOR.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/leases/**", "/api/v1/leases")
                .access(any(ENGINE, AGENT, OPERATOR))
                .pathMatchers("/api/v1/leases/*/quiesced")
                .access(any(ENGINE, AGENT, OPERATOR))
                .pathMatchers("/api/v1/leases/**")
                .access(any(ENGINE, OPERATOR))
                // polling hands orders out (claims them): the host's agent only, operators just read agents
                .pathMatchers(HttpMethod.GET, "/api/v1/agents/*/orders")
                .hasRole(AGENT.name())
                .pathMatchers(HttpMethod.GET, "/api/v1/agents/**", "/api/v1/agents")
                .access(any(AGENT, OPERATOR))
                .pathMatchers("/api/v1/agents/**", "/api/v1/agents", "/api/v1/orders/**")
                .hasRole(AGENT.name())
                .pathMatchers("/api/v1/cleanup/**", "/api/v1/audit/**", "/api/v1/audit")
                .hasRole(OPERATOR.name())
                .anyExchange()
                .authenticated();
    }

    private static org.springframework.security.authorization.ReactiveAuthorizationManager<
                    org.springframework.security.web.server.authorization.AuthorizationContext>
            any(Role... roles) {
        return org.springframework.security.authorization.AuthorityReactiveAuthorizationManager.hasAnyRole(
                Arrays.stream(roles).map(Role::name).toArray(String[]::new));
    }

    private static ReactiveAuthenticationManager authenticationManager(ApiTokens tokens) {
        return authentication -> {
            String secret = String.valueOf(authentication.getCredentials());
            return tokens.authenticate(secret)
                    .<Authentication>map(TokenAuthentication::new)
                    .switchIfEmpty(
                            Mono.error(() -> new org.springframework.security.authentication.BadCredentialsException(
                                    "unknown or revoked token")));
        };
    }
}
