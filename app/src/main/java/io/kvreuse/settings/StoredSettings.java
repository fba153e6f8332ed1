package io.kvreuse.settings;

import java.time.Instant;

/** The stored settings document with its version and last editor. */
public record StoredSettings(ReuseSettings settings, long version, Instant updatedAt, String updatedBy) {}
