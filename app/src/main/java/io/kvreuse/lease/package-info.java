/** Leases end to end: the lease state machine, the engine command channel, deadlines and calibration. */
@NullMarked
package io.kvreuse.lease;

import org.jspecify.annotations.NullMarked;
