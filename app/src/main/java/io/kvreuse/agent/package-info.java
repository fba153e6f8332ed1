/** The node-agent role: imports engines' regions, holds one NIXL agent per GPU and executes transfer orders. */
@NullMarked
package io.kvreuse.agent;

import org.jspecify.annotations.NullMarked;
