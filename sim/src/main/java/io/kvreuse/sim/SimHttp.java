package io.kvreuse.sim;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.ApiCallException;
import io.kvreuse.testkit.KvReuseClient;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The API client of the test kit as an engine speaks it, with one bearer token: failures are
 * {@link SimEngineException}s, which the engines' loops and their callers handle. Counts the
 * request-body bytes it sends, so a test can show that no KV payload went through the control plane.
 */
public final class SimHttp {

    private final KvReuseClient client;

    public SimHttp(String baseUrl, String token, AtomicLong bytesSent) {
        this.client = new KvReuseClient(baseUrl, token).countingSentBytes(bytesSent);
    }

    /** The status and JSON body of one call. */
    public record Response(int status, JsonNode body) {
        public Response expect(int expected, String call) {
            if (status != expected) {
                throw new SimEngineException(call + " -> " + status + " " + body);
            }
            return this;
        }
    }

    public Response get(String path, Duration timeout) {
        return call(() -> client.get(path, timeout));
    }

    public Response post(String path, @Nullable Object body) {
        return call(() -> client.post(path, body));
    }

    public Response put(String path, Object body) {
        return call(() -> client.put(path, body));
    }

    /** A GET whose answer is text, not JSON (e.g. {@code /actuator/prometheus}); throws unless 200. */
    public String getText(String path, Duration timeout) {
        Answer answer = call(() -> client.get(path, timeout), a -> a);
        if (answer.status() != 200) {
            throw new SimEngineException("GET " + path + " -> " + answer.status());
        }
        return answer.body();
    }

    private static Response call(java.util.function.Supplier<Answer> call) {
        return call(call, a -> new Response(a.status(), a.json()));
    }

    private static <T> T call(java.util.function.Supplier<Answer> call, java.util.function.Function<Answer, T> read) {
        try {
            return read.apply(call.get());
        } catch (ApiCallException e) {
            throw new SimEngineException("HTTP call failed: " + e.getMessage(), e);
        }
    }
}
