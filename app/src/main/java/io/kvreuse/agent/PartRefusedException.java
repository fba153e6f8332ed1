package io.kvreuse.agent;

/** A part cannot run as given (unknown region, unmanaged GPU, inconsistent runs); it fails without touching memory. */
final class PartRefusedException extends RuntimeException {

    PartRefusedException(String message) {
        super(message);
    }

    PartRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
