package io.kvreuse.admin;

import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The overview's headline ({@code kvreuse.admin.headline.*}).
 *
 * @param minutesKept how long the per-minute selection answers are kept; the longest headline
 *     window is a day, so anything past that only serves looking back with {@code until=}
 */
@ConfigurationProperties("kvreuse.admin.headline")
@Validated
record HeadlineProperties(@NotNull @DefaultValue("8d") Duration minutesKept) {}
