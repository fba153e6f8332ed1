/** Engine incarnations: registration, heartbeats, the liveness state machine and fencing epochs. */
@NullMarked
package io.kvreuse.incarnation;

import org.jspecify.annotations.NullMarked;
