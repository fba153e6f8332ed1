package io.kvreuse.protocol;

import java.util.regex.Pattern;

/**
 * The DNS host names endpoints may name (an engine's control endpoint, an event source's publisher):
 * names a resolver can look up (RFC 1123), so a typo such as {@code a..b} or a label of 64
 * characters is refused where it is entered rather than failing every connect later.
 */
public final class HostNames {

    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");

    private HostNames() {}

    /** Whether {@code host} is dot-separated labels of 1–63 letters, digits and inner hyphens, 253 characters at most. */
    public static boolean isDnsName(String host) {
        if (host.isEmpty() || host.length() > 253) {
            return false;
        }
        for (String label : host.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return false;
            }
        }
        return true;
    }
}
