package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;

/** A browser-like dashboard session over WebTestClient: the session cookie and the forms' CSRF token. */
final class AdminSession {

    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");

    private final WebTestClient http;
    private @Nullable String cookie;

    private AdminSession(WebTestClient http) {
        // the machine is shared: a page may take more than WebTestClient's default 5 s under load
        this.http =
                http.mutate().responseTimeout(java.time.Duration.ofSeconds(30)).build();
    }

    /** An anonymous session holding only the sign-in page's cookie. */
    static AdminSession anonymous(WebTestClient http) {
        return new AdminSession(http);
    }

    /** Signs in with the token; asserts the redirect to the dashboard. */
    static AdminSession signIn(WebTestClient http, String token) {
        AdminSession s = new AdminSession(http);
        EntityExchangeResult<byte[]> result = s.submitLogin(token);
        assertThat(result.getStatus().is3xxRedirection()).isTrue();
        assertThat(result.getResponseHeaders().getLocation()).hasToString("/admin");
        return s;
    }

    EntityExchangeResult<byte[]> submitLogin(String token) {
        String csrf = csrfFrom("/login");
        MultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("token", token);
        form.add("_csrf", csrf);
        return post("/login", form);
    }

    @Nullable
    String cookie() {
        return cookie;
    }

    /** The CSRF token rendered into the forms of a page. */
    String csrfFrom(String page) {
        String html = html(page, HttpStatus.OK);
        Matcher m = CSRF.matcher(html);
        assertThat(m.find()).as("a CSRF field on " + page).isTrue();
        return m.group(1).replace("&#39;", "'").replace("&quot;", "\"");
    }

    String html(String path, HttpStatus expected) {
        EntityExchangeResult<byte[]> r = get(path);
        assertThat(r.getStatus().value()).as("GET " + path).isEqualTo(expected.value());
        assertThat(r.getResponseHeaders().getContentType()).isNotNull();
        assertThat(r.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_HTML))
                .as("HTML from " + path)
                .isTrue();
        return new String(r.getResponseBodyContent() == null ? new byte[0] : r.getResponseBodyContent());
    }

    EntityExchangeResult<byte[]> get(String path) {
        var spec = http.get().uri(path).accept(MediaType.TEXT_HTML, MediaType.ALL);
        if (cookie != null) {
            spec = spec.cookie(AdminSecurityConfiguration.SESSION_COOKIE, cookie);
        }
        return remember(spec.exchange().expectBody().returnResult());
    }

    EntityExchangeResult<byte[]> getJson(String path) {
        var spec = http.get().uri(path).accept(MediaType.APPLICATION_JSON);
        if (cookie != null) {
            spec = spec.cookie(AdminSecurityConfiguration.SESSION_COOKIE, cookie);
        }
        return remember(spec.exchange().expectBody().returnResult());
    }

    /** Posts a form as a browser would, with the session cookie; add {@code _csrf} yourself. */
    EntityExchangeResult<byte[]> post(String path, MultiValueMap<String, String> form) {
        var spec = http.post().uri(path).accept(MediaType.TEXT_HTML).contentType(MediaType.APPLICATION_FORM_URLENCODED);
        if (cookie != null) {
            spec = spec.cookie(AdminSecurityConfiguration.SESSION_COOKIE, cookie);
        }
        return remember(spec.body(BodyInserters.fromFormData(form))
                .exchange()
                .expectBody()
                .returnResult());
    }

    /** Posts a form with the CSRF token of {@code page}. */
    EntityExchangeResult<byte[]> submit(String page, String action, MultiValueMap<String, String> form) {
        form.set("_csrf", csrfFrom(page));
        return post(action, form);
    }

    private EntityExchangeResult<byte[]> remember(EntityExchangeResult<byte[]> r) {
        ResponseCookie set = r.getResponseCookies().getFirst(AdminSecurityConfiguration.SESSION_COOKIE);
        if (set != null) {
            cookie = set.getValue().isEmpty() ? null : set.getValue();
        }
        return r;
    }

    static String body(EntityExchangeResult<byte[]> r) {
        return r.getResponseBodyContent() == null ? "" : new String(r.getResponseBodyContent());
    }
}
