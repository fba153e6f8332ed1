/**
 * Simulated engines for tests and demos: a decode donor and a prefill target that speak the real
 * HTTP API and keep their "GPU" memory in shared-memory regions the node agent imports.
 */
@NullMarked
package io.kvreuse.sim;

import org.jspecify.annotations.NullMarked;
