/** Donor selection, the router's hot path: in-memory directory and index, profitability, the hint. */
@NullMarked
package io.kvreuse.selection;

import org.jspecify.annotations.NullMarked;
