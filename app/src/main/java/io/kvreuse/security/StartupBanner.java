package io.kvreuse.security;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * One log event once the control plane serves: where the dashboard and the API documents are, and
 * where the first operator token comes from. It is the line a newcomer looks for, so it is logged
 * once, after the bootstrap token is installed.
 */
@Component
class StartupBanner {

    private static final Log log = LogFactory.getLog(StartupBanner.class);

    private final BootstrapToken bootstrap;
    private final Environment env;

    StartupBanner(BootstrapToken bootstrap, Environment env) {
        this.bootstrap = bootstrap;
        this.env = env;
    }

    @EventListener(ApplicationReadyEvent.class)
    @Order(10)
    void announce() {
        log.info(text(baseUrl(), bootstrap.whereFrom()));
    }

    static String text(String baseUrl, String tokenWhereFrom) {
        return "kvreuse control plane is ready\n"
                + "  dashboard:      " + baseUrl + "/login\n"
                + "  API docs:       " + baseUrl + "/swagger-ui.html (once signed in to the dashboard)\n"
                + "  OpenAPI:        " + baseUrl + "/v3/api-docs (with any API token)\n"
                + "  operator token: " + tokenWhereFrom;
    }

    private String baseUrl() {
        return baseUrl(
                env.getProperty("server.address", ""),
                env.getProperty("local.server.port", env.getProperty("server.port", "8080")),
                env.getProperty("spring.webflux.base-path", ""));
    }

    /** Where a browser on this machine reaches the server: a wildcard or unset address is localhost. */
    static String baseUrl(String address, String port, String basePath) {
        String host = address.strip();
        if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            host = "localhost";
        } else if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return "http://" + host + ":" + port + basePath;
    }
}
