/** JMH benchmarks and footprint measurements of the prefix index, run by {@code benchmarks/run.sh}. */
@NullMarked
package io.kvreuse.benchmarks;

import org.jspecify.annotations.NullMarked;
