package io.kvreuse.web;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What a slow or idle client may hold of the HTTP server ({@code kvreuse.http.*}), in both roles.
 *
 * @param headerReadTimeout a new connection, or a request's first bytes, must be followed by the
 *     complete request line and headers within this long; otherwise the connection is closed (no
 *     token is needed to open a connection, so this is what keeps one from being held forever)
 * @param idleTimeout a keep-alive connection without a request for this long is closed
 * @param bodyReadTimeout a request body must arrive completely within this long after its headers;
 *     otherwise the answer is 408 and the connection is closed
 * @param maxConnections most open connections per process; one more is closed as soon as it is
 *     accepted, so file descriptors and memory stay bounded
 */
@ConfigurationProperties("kvreuse.http")
@Validated
record HttpServerLimits(
        @NotNull @DefaultValue("5s") Duration headerReadTimeout,
        @NotNull @DefaultValue("60s") Duration idleTimeout,
        @NotNull @DefaultValue("30s") Duration bodyReadTimeout,
        @Min(16) @Max(1_000_000) @DefaultValue("10000") int maxConnections) {

    @AssertTrue(message = "headerReadTimeout, idleTimeout and bodyReadTimeout must be positive")
    boolean isPositive() {
        return headerReadTimeout.isPositive() && idleTimeout.isPositive() && bodyReadTimeout.isPositive();
    }
}
