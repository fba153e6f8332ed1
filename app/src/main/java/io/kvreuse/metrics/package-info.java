/** Prometheus gauges of the fleet's current state, read from PostgreSQL on a bounded schedule. */
@NullMarked
package io.kvreuse.metrics;

import org.jspecify.annotations.NullMarked;
