package io.kvreuse.sim;

/** A simulated engine met an answer it did not expect. */
public final class SimEngineException extends RuntimeException {

    public SimEngineException(String message) {
        super(message);
    }

    public SimEngineException(String message, Throwable cause) {
        super(message, cause);
    }
}
