/** Retained banks of decode incarnations: parts per rank, ordered inventory ingestion, publication. */
@NullMarked
package io.kvreuse.bank;

import org.jspecify.annotations.NullMarked;
