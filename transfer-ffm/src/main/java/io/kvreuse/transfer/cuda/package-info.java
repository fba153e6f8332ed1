/** CUDA IPC imports of engines' GPU regions, bound to the CUDA runtime's C ABI through FFM. */
@NullMarked
package io.kvreuse.transfer.cuda;

import org.jspecify.annotations.NullMarked;
