/** The append-only audit trail of state transitions and operator actions. */
@NullMarked
package io.kvreuse.audit;

import org.jspecify.annotations.NullMarked;
