package io.kvreuse.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A 403 for a role names the role(s) the call needs, in a field and in the detail. */
@IntegrationTest
class ForbiddenProblemIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void engineListingTokensThenForbiddenNamingOperator() {
        Map<String, Object> problem = forbidden(HttpMethod.GET, "/api/v1/tokens", tokens.mint(Role.ENGINE), null);
        assertThat(problem.get("requiredRoles")).isEqualTo(List.of("OPERATOR"));
        assertThat(problem.get("tokenRole")).isEqualTo("ENGINE");
        assertThat(problem.get("detail"))
                .isEqualTo("this call needs the OPERATOR role; this token has the ENGINE role");
    }

    @Test
    void operatorSelectingADonorThenForbiddenNamingRouter() {
        Map<String, Object> problem = forbidden(HttpMethod.POST, "/api/v1/donor-selections", tokens.operator(), "{}");
        assertThat(problem.get("requiredRoles")).isEqualTo(List.of("ROUTER"));
        assertThat(problem.get("tokenRole")).isEqualTo("OPERATOR");
        assertThat((String) problem.get("detail")).contains("ROUTER").doesNotContain("ENGINE");
    }

    @Test
    void routerReadingLeasesThenForbiddenNamingEveryAllowedRole() {
        Map<String, Object> problem = forbidden(HttpMethod.GET, "/api/v1/leases", tokens.mint(Role.ROUTER), null);
        assertThat(problem.get("requiredRoles")).isEqualTo(List.of("ENGINE", "AGENT", "OPERATOR"));
        assertThat(problem.get("detail"))
                .isEqualTo("this call needs one of the roles ENGINE, AGENT, OPERATOR; this token has the ROUTER role");
    }

    @Test
    void routerCertifyingADomainThenForbiddenWhileReadingIsAllowed() {
        String router = tokens.mint(Role.ROUTER);
        Map<String, Object> problem = forbidden(HttpMethod.POST, "/api/v1/domains", router, "{}");
        assertThat(problem.get("requiredRoles")).isEqualTo(List.of("OPERATOR"));
        http.get()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + router)
                .exchange()
                .expectStatus()
                .isOk();
    }

    @Test
    void missingTokenThenUnauthorizedWithoutRequiredRoles() {
        http.get()
                .uri("/api/v1/tokens")
                .exchange()
                .expectStatus()
                .isUnauthorized()
                .expectBody()
                .jsonPath("$.requiredRoles")
                .doesNotExist();
    }

    private Map<String, Object> forbidden(HttpMethod method, String uri, String token, String body) {
        var spec = http.method(method).uri(uri).header("Authorization", "Bearer " + token);
        var sent = body == null
                ? spec.exchange()
                : spec.contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
        Map<String, Object> problem = sent.expectStatus()
                .isForbidden()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody(new ParameterizedTypeReference<Map<String, Object>>() {})
                .returnResult()
                .getResponseBody();
        assertThat(problem).isNotNull();
        assertThat(problem.get("type")).isEqualTo("https://kvreuse.io/problems/forbidden");
        return problem;
    }
}
