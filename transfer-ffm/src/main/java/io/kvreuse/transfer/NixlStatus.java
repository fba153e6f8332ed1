package io.kvreuse.transfer;

/**
 * The one place where {@code nixl_capi_status_t} codes become exceptions. Both conventions map here:
 * newer builds pass INVALID_PARAM (-1) and NOT_FOUND (-6) through, older ones report them as BACKEND
 * (-2), which {@link PeerDiagnosis} resolves by asking NIXL what it knows.
 */
final class NixlStatus {

    static final int SUCCESS = 0;
    static final int IN_PROG = 1;
    static final int INVALID_PARAM = -1;
    static final int BACKEND = -2;
    static final int INVALID_STATE = -3;
    static final int EXCEPTION = -4;
    static final int NO_TELEMETRY = -5;
    static final int NOT_FOUND = -6;

    private NixlStatus() {}

    /** Returns SUCCESS or IN_PROG unchanged; throws the mapped exception for any error code. */
    static int check(int code, String operation, String handle) {
        if (code == SUCCESS || code == IN_PROG) {
            return code;
        }
        throw exception(code, operation, handle);
    }

    static NixlException exception(int code, String operation, String handle) {
        return switch (code) {
            case INVALID_PARAM -> new NixlInvalidParameterException(operation, handle, code, "invalid parameter");
            case BACKEND -> new NixlBackendException(operation, handle, code, "backend failure");
            case INVALID_STATE -> new NixlInvalidStateException(operation, handle, code, "invalid handle state");
            case EXCEPTION -> new NixlNativeException(operation, handle, code, "exception inside NIXL");
            case NO_TELEMETRY ->
                new NixlTelemetryUnavailableException(operation, handle, code, "telemetry not captured");
            case NOT_FOUND -> new NixlNotFoundException(operation, handle, code, "not found");
            default -> new NixlException(operation, handle, code, "unknown status");
        };
    }
}
