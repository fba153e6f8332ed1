/** Idiomatic Java access to NIXL through the Foreign Function &amp; Memory API. */
@NullMarked
package io.kvreuse.transfer;

import org.jspecify.annotations.NullMarked;
