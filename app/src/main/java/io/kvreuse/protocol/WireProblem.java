package io.kvreuse.protocol;

import org.jspecify.annotations.Nullable;

/**
 * The problem types of the control plane's answers that the node agent acts on, and the base of
 * every problem {@code type} URI. The control plane's catalogue ({@code io.kvreuse.error.ProblemType})
 * takes these slugs from here, so both sides spell them once.
 */
public enum WireProblem {
    /** The agent's fencing epoch is not the current one: it registers again. */
    STALE_EPOCH("stale-epoch"),
    /** The control plane no longer knows the agent's host: it registers again. */
    NO_SUCH_AGENT("no-such-agent");

    /** Base of every problem {@code type} URI; the slug after it names the problem. */
    public static final String TYPE_BASE = "https://kvreuse.io/problems/";

    private final String slug;

    WireProblem(String slug) {
        this.slug = slug;
    }

    /** The last segment of the problem's {@code type} URI. */
    public String slug() {
        return slug;
    }

    /** The slug of a problem {@code type} URI of kvreuse; empty for anything else. */
    public static String slugOf(@Nullable String type) {
        return type != null && type.startsWith(TYPE_BASE) ? type.substring(TYPE_BASE.length()) : "";
    }

    /** Whether an answer's slug is this problem. */
    public boolean is(String slug) {
        return this.slug.equals(slug);
    }
}
