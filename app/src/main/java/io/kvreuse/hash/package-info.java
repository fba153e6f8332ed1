/** Block sequence hashes: unsigned 64-bit values carried as strings in the REST API. */
@NullMarked
package io.kvreuse.hash;

import org.jspecify.annotations.NullMarked;
