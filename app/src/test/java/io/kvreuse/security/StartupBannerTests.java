package io.kvreuse.security;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StartupBannerTests {

    @Test
    void aWildcardOrUnsetAddressIsShownAsLocalhostAndAnIpv6AddressInBrackets() {
        assertThat(StartupBanner.baseUrl("", "8080", "")).isEqualTo("http://localhost:8080");
        assertThat(StartupBanner.baseUrl("0.0.0.0", "9000", "")).isEqualTo("http://localhost:9000");
        assertThat(StartupBanner.baseUrl("::", "8080", "")).isEqualTo("http://localhost:8080");
        assertThat(StartupBanner.baseUrl("10.0.0.7", "8080", "")).isEqualTo("http://10.0.0.7:8080");
        assertThat(StartupBanner.baseUrl("2001:db8::7", "8080", "")).isEqualTo("http://[2001:db8::7]:8080");
        assertThat(StartupBanner.baseUrl("", "8080", "/kv")).isEqualTo("http://localhost:8080/kv");
    }

    @Test
    void theBannerIsOneMessageNamingTheDashboardTheApiDocsAndTheToken() {
        String banner = StartupBanner.text("http://localhost:8080", "in the file /data/bootstrap-token");
        assertThat(banner.lines())
                .containsExactly(
                        "kvreuse control plane is ready",
                        "  dashboard:      http://localhost:8080/login",
                        "  API docs:       http://localhost:8080/swagger-ui.html (once signed in to the dashboard)",
                        "  OpenAPI:        http://localhost:8080/v3/api-docs (with any API token)",
                        "  operator token: in the file /data/bootstrap-token");
        assertThat(banner).doesNotContain("null").doesNotEndWith("\n");
    }
}
