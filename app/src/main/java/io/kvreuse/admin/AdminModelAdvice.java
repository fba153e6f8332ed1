package io.kvreuse.admin;

import io.kvreuse.security.ApiPrincipal;
import io.kvreuse.security.CurrentPrincipal;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** What every dashboard page needs: the CSRF token for its forms and the signed-in operator. */
@ControllerAdvice(basePackageClasses = AdminModelAdvice.class)
class AdminModelAdvice {

    @ModelAttribute("_csrf")
    Mono<CsrfToken> csrf(ServerWebExchange exchange) {
        Mono<CsrfToken> token = exchange.getAttribute(CsrfToken.class.getName());
        return token == null ? Mono.empty() : token;
    }

    @ModelAttribute("operator")
    Mono<ApiPrincipal> operator() {
        return CurrentPrincipal.get();
    }

    @ModelAttribute("currentPath")
    String currentPath(ServerWebExchange exchange) {
        return exchange.getRequest().getPath().value();
    }
}
