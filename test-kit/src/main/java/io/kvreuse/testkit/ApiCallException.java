package io.kvreuse.testkit;

/**
 * A call of the kvreuse API that did not get the answer its caller needed: the exchange failed
 * (connection refused, timeout) or the status was not the expected one ({@link #status()} and
 * {@link #body()} then say what came back).
 */
public final class ApiCallException extends RuntimeException {

    private final int status;
    private final String body;

    ApiCallException(String message, Throwable cause) {
        super(message, cause);
        this.status = -1;
        this.body = "";
    }

    ApiCallException(String message, int status, String body) {
        super(message);
        this.status = status;
        this.body = body;
    }

    /** The status the server answered; -1 when no answer came. */
    public int status() {
        return status;
    }

    /** The body the server answered; empty when no answer came. */
    public String body() {
        return body;
    }
}
