/** Wire records between the control plane and node agents, as the agent sends and reads them (API.md "Node agents"). */
@NullMarked
package io.kvreuse.protocol;

import org.jspecify.annotations.NullMarked;
