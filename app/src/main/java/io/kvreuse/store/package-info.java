/** Small helpers shared by the R2DBC stores of every feature. */
@NullMarked
package io.kvreuse.store;

import org.jspecify.annotations.NullMarked;
