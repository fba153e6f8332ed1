/** Operator cleanup of incarnations that did not exit cleanly: dry-run plans, attested execution, audit. */
@NullMarked
package io.kvreuse.cleanup;

import org.jspecify.annotations.NullMarked;
