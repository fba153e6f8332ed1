package io.kvreuse.agent;

import io.kvreuse.protocol.WireProblem;

/**
 * The control plane answered with an error status. {@code problemType} is the slug of its RFC 9457
 * problem ({@code stale-epoch}, {@code no-such-agent}, …), empty when the body was not a problem.
 */
final class ControlPlaneException extends RuntimeException {

    private final int status;
    private final String problemType;

    ControlPlaneException(String call, int status, String problemType, String detail) {
        super(
                call + " -> " + status + (problemType.isEmpty() ? "" : " " + problemType) + ": " + detail,
                null,
                false,
                false);
        this.status = status;
        this.problemType = problemType;
    }

    int status() {
        return status;
    }

    String problemType() {
        return problemType;
    }

    /** The agent must register again: its epoch is stale or the control plane no longer knows the host. */
    boolean needsRegistration() {
        return status == 409 && WireProblem.STALE_EPOCH.is(problemType)
                || status == 404 && WireProblem.NO_SUCH_AGENT.is(problemType);
    }

    /** Worth retrying unchanged: the control plane or its store is (briefly) unavailable. */
    boolean isTransient() {
        return status >= 500 || status == 429 || status == 408;
    }
}
