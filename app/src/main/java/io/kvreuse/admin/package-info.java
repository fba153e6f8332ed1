/** The operators' admin dashboard: session sign-in with an OPERATOR token, HTML pages and their errors. */
@NullMarked
package io.kvreuse.admin;

import org.jspecify.annotations.NullMarked;
