/** Leases end to end: the lease state machine, the engine command channel, PROPOSED leases and deadlines. */
@NullMarked
package io.kvreuse.lease;

import org.jspecify.annotations.NullMarked;
