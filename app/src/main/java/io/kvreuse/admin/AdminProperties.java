package io.kvreuse.admin;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The admin dashboard ({@code kvreuse.admin.*}).
 *
 * @param sessionIdleTimeout a signed-in session ends after this long without a request
 * @param secureCookie mark the session cookie {@code Secure}; set it when the UI is served over TLS
 * @param maxSessions most concurrent browser sessions kept by this replica
 * @param sampleInterval how often the overview's time series take a point
 * @param samplesKept points kept per series (with the default interval, one hour)
 */
@ConfigurationProperties("kvreuse.admin")
@Validated
record AdminProperties(
        @NotNull @DefaultValue("30m") Duration sessionIdleTimeout,
        @DefaultValue("false") boolean secureCookie,
        @Min(1) @Max(1_000_000) @DefaultValue("10000") int maxSessions,
        @NotNull @DefaultValue("5s") Duration sampleInterval,
        @Min(2) @Max(100_000) @DefaultValue("720") int samplesKept) {}
