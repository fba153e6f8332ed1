/** Boot-time configuration: embedded development database, clocks and schedulers. */
@NullMarked
package io.kvreuse.config;

import org.jspecify.annotations.NullMarked;
