/**
 * The one contract between the control plane and node agents (API.md "Node agents"): the wire
 * records both sides send and read, and the host conventions both rely on (NIXL agent names, the
 * data directory).
 */
@NullMarked
package io.kvreuse.protocol;

import org.jspecify.annotations.NullMarked;
