package io.kvreuse.admin;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.OperatorLogin.NotOperatorException;
import java.net.URI;
import java.util.Locale;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.WebFilterExchange;
import org.springframework.security.web.server.authentication.RedirectServerAuthenticationSuccessHandler;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;
import org.springframework.security.web.server.authentication.ServerAuthenticationSuccessHandler;
import org.springframework.security.web.server.authentication.logout.ServerLogoutHandler;
import org.springframework.security.web.server.savedrequest.ServerRequestCache;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * What happens around sign-in and sign-out: both are audited with the operator as actor, and a
 * refused sign-in goes back to the form with the reason (never the token).
 */
@Component
class SignInEvents {

    private static final Log log = LogFactory.getLog(SignInEvents.class);
    private static final String SUBJECT_TYPE = "admin-session";

    private final AuditTrail audit;

    SignInEvents(AuditTrail audit) {
        this.audit = audit;
    }

    ServerAuthenticationSuccessHandler successHandler(ServerRequestCache requests) {
        var redirect = new RedirectServerAuthenticationSuccessHandler("/admin");
        redirect.setRequestCache(requests);
        return (exchange, authentication) ->
                record(authentication, "UI_SIGNED_IN").then(redirect.onAuthenticationSuccess(exchange, authentication));
    }

    ServerAuthenticationFailureHandler failureHandler() {
        return (exchange, failure) -> {
            String code = failure instanceof NotOperatorException n
                    ? "role-" + n.role().name().toLowerCase(Locale.ROOT)
                    : "invalid";
            log.warn("admin sign-in refused: " + failure.getMessage());
            return redirect(exchange, "/login?error=" + code);
        };
    }

    ServerLogoutHandler logoutHandler() {
        return (exchange, authentication) -> record(authentication, "UI_SIGNED_OUT");
    }

    private Mono<Void> record(Authentication authentication, String action) {
        if (!(authentication.getPrincipal() instanceof ApiPrincipal p)) {
            return Mono.empty();
        }
        return audit.record(
                AuditEntry.action(p.actor(), SUBJECT_TYPE, p.tokenId().toString(), action));
    }

    private static Mono<Void> redirect(WebFilterExchange exchange, String location) {
        return Mono.fromRunnable(() -> {
            var response = exchange.getExchange().getResponse();
            response.setStatusCode(HttpStatus.SEE_OTHER);
            response.getHeaders().setLocation(URI.create(location));
        });
    }
}
