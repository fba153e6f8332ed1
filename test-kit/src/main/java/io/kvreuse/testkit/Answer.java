package io.kvreuse.testkit;

import tools.jackson.databind.JsonNode;

/**
 * What one call got back: the status, the content type and the body as text. {@code call} names
 * the request ({@code POST /api/v1/leases/…/commit}) for failure messages.
 */
public record Answer(String call, int status, String contentType, String body) {

    /** The body as JSON; an empty body reads as an empty object. */
    public JsonNode json() {
        return body.isEmpty() ? Json.MAPPER.createObjectNode() : Json.MAPPER.readTree(body);
    }

    /** True for an {@code application/problem+json} answer. */
    public boolean isProblem() {
        return contentType.startsWith("application/problem+json");
    }

    /** The problem this answer carries; throws when it is not a problem answer. */
    public Problem problem() {
        if (!isProblem()) {
            throw new ApiCallException(call + " answered no problem: " + this, status, body);
        }
        return Problem.of(json());
    }

    /** This answer when its status is {@code expected}; otherwise an {@link ApiCallException} saying what came. */
    public Answer expect(int expected) {
        if (status != expected) {
            throw new ApiCallException(
                    call + " -> " + status + " " + body + " (expected " + expected + ")", status, body);
        }
        return this;
    }

    /** The JSON body when the status is {@code expected}. */
    public JsonNode expectJson(int expected) {
        return expect(expected).json();
    }

    @Override
    public String toString() {
        return status + " " + body;
    }
}
