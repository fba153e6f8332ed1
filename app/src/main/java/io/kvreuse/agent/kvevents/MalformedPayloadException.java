package io.kvreuse.agent.kvevents;

/** A payload that is not a batch at all: none of its events can be recovered. */
final class MalformedPayloadException extends Exception {

    MalformedPayloadException(String message) {
        super(message);
    }

    MalformedPayloadException(String message, Throwable cause) {
        super(message, cause);
    }
}
