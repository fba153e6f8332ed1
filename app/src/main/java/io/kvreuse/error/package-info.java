/** The base of every domain exception: a stable problem kind that web/ maps once to RFC 9457. */
@NullMarked
package io.kvreuse.error;

import org.jspecify.annotations.NullMarked;
