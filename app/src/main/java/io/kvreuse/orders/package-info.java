/** Node agents on the control-plane side: registration, heartbeats, the transfer order queue and part reports. */
@NullMarked
package io.kvreuse.orders;

import org.jspecify.annotations.NullMarked;
