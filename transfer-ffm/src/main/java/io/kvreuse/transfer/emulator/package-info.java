/** Test and CPU-only support: locating and steering the kvreuse NIXL emulator, never a real NIXL. */
@NullMarked
package io.kvreuse.transfer.emulator;

import org.jspecify.annotations.NullMarked;
