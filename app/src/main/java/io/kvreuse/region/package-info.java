/** Destination regions: the memory a target incarnation registers, per rank, for transfers to write. */
@NullMarked
package io.kvreuse.region;

import org.jspecify.annotations.NullMarked;
