package io.kvreuse.transfer;

/** Telemetry was requested from an agent created without telemetry capture. */
public final class NixlTelemetryUnavailableException extends NixlException {

    NixlTelemetryUnavailableException(String operation, String handle, int code, String meaning) {
        super(operation, handle, code, meaning);
    }
}
