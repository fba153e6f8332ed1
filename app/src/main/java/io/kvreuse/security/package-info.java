/** API tokens, roles and the bearer-token security chain. */
@NullMarked
package io.kvreuse.security;

import org.jspecify.annotations.NullMarked;
