package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A client that closes its connection in the middle of a request body is a client abort, not a 500. */
@IntegrationTest
@ExtendWith(OutputCaptureExtension.class)
class ClientAbortIntegrationTests {

    @LocalServerPort
    int port;

    @Autowired
    TestTokens tokens;

    @Autowired
    MeterRegistry meters;

    @Autowired
    WebTestClient http;

    @Test
    void clientClosingMidBodyIsCountedAsAnAbortAndNotLoggedAsAnError(CapturedOutput output) throws Exception {
        String subject = "mid-body-" + java.util.UUID.randomUUID();
        double abortsBefore = aborts();
        long serverErrorsBefore = serverErrors();
        int outputBefore = output.getAll().length();

        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = socket.getOutputStream();
            String partialBody = "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\",\"description\":\"";
            out.write(("POST /api/v1/tokens HTTP/1.1\r\nHost: localhost\r\n"
                            + "Authorization: Bearer " + tokens.operator() + "\r\n"
                            + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" + partialBody)
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            Thread.sleep(300); // the server is reading the body now
        }

        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (aborts() == abortsBefore && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(aborts()).as("client aborts counted").isEqualTo(abortsBefore + 1);
        Thread.sleep(300); // whatever else the exchange would log or record has happened by now
        String logged = output.getAll().substring(outputBefore);
        assertThat(logged)
                .as("nothing logged at ERROR for a client that went away")
                .doesNotContain("ERROR")
                .doesNotContain("internal-error");
        assertThat(serverErrors()).as("requests recorded as 5xx").isEqualTo(serverErrorsBefore);
        http.get()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .value(body ->
                        assertThat(body).as("no token minted from half a body").doesNotContain(subject));
    }

    private double aborts() {
        var counter = meters.find("kvreuse.http.client.aborts").counter();
        return counter == null ? 0 : counter.count();
    }

    private long serverErrors() {
        return meters.find("http.server.requests").timers().stream()
                .filter(t -> String.valueOf(t.getId().getTag("status")).startsWith("5"))
                .mapToLong(Timer::count)
                .sum();
    }
}
