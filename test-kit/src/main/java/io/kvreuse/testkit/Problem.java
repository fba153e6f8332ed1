package io.kvreuse.testkit;

import tools.jackson.databind.JsonNode;

/**
 * An RFC 9457 problem answer as the kvreuse API writes it: a stable {@code type} URI per kind of
 * problem, a fixed {@code title}, the HTTP {@code status}, this occurrence's {@code detail}, and the
 * whole document for extension fields ({@code incarnationId}, {@code expectedEpoch}, {@code retryable}…).
 */
public record Problem(String type, String title, int status, String detail, JsonNode document) {

    static Problem of(JsonNode document) {
        return new Problem(
                document.path("type").asString(""),
                document.path("title").asString(""),
                document.path("status").asInt(0),
                document.path("detail").asString(""),
                document);
    }

    /** The last path segment of {@code type}, e.g. {@code incarnation-fenced}. */
    public String slug() {
        return type.substring(type.lastIndexOf('/') + 1);
    }
}
