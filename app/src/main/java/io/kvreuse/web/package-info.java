/** HTTP plumbing shared by every feature: RFC 9457 problem mapping and request limits. */
@NullMarked
package io.kvreuse.web;

import org.jspecify.annotations.NullMarked;
