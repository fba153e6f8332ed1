package io.kvreuse.transfer;

import java.nio.charset.StandardCharsets;

/** A notification message another agent sent to this one. */
public record Notification(String fromAgent, byte[] message) {

    public Notification {
        message = message.clone();
    }

    @Override
    public byte[] message() {
        return message.clone();
    }

    /** The message as UTF-8 text (vLLM-style {@code "requestId:worldSize"} messages are text). */
    public String text() {
        return new String(message, StandardCharsets.UTF_8);
    }
}
