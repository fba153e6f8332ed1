package io.kvreuse.agent;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * The agent serves no API: only health probes and Prometheus metrics (which hold counters, never
 * addresses or metadata) are open; everything else is refused.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
class AgentSecurity {

    @Bean
    SecurityWebFilterChain agentEndpoints(ServerHttpSecurity http) {
        return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .authorizeExchange(
                        auth -> auth.pathMatchers("/actuator/health", "/actuator/health/**", "/actuator/prometheus")
                                .permitAll()
                                .anyExchange()
                                .denyAll())
                .build();
    }
}
