/** kvreuse: the control plane for decode-to-prefill KV prefix reuse. */
@NullMarked
package io.kvreuse;

import org.jspecify.annotations.NullMarked;
