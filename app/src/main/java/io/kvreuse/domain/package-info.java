/** Certified layout domains: the contracts that make two engines' KV blocks byte-compatible, and their cost models. */
@NullMarked
package io.kvreuse.domain;

import org.jspecify.annotations.NullMarked;
