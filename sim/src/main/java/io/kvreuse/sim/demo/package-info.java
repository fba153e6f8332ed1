/**
 * The one-command demo: a control plane on the embedded PostgreSQL, a node agent on the NIXL
 * emulator and simulated engines serving multi-turn conversations, ending with an OFF-vs-ON report.
 */
@NullMarked
package io.kvreuse.sim.demo;

import org.jspecify.annotations.NullMarked;
