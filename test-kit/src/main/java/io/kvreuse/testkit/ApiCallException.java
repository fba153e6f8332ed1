package io.kvreuse.testkit;

/**
 * A call of the kvreuse API that did not get the answer its caller needed: the exchange failed
 * (connection refused, timeout) or the status was not the expected one ({@link #answer()} then
 * says what came back).
 */
public final class ApiCallException extends RuntimeException {

    private final transient Answer answer;

    ApiCallException(String message, Throwable cause) {
        super(message, cause);
        this.answer = null;
    }

    ApiCallException(String message, Answer answer) {
        super(message);
        this.answer = answer;
    }

    /** What the server answered; null when no answer came. */
    public Answer answer() {
        return answer;
    }
}
