/** Load generators that drive the built control plane through its REST API. */
@NullMarked
package io.kvreuse.benchmarks.rest;

import org.jspecify.annotations.NullMarked;
