/** The operator-editable reuse settings: validated, audited, effective at once on every replica. */
@NullMarked
package io.kvreuse.settings;

import org.jspecify.annotations.NullMarked;
