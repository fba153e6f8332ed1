package io.kvreuse.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reactor Netty's access log of a kvreuse process (the system fleet's replicas log one):
 * each request as the server timed it, from its arrival to its answer. A router's own clock also
 * counts the time its request and answer spent in two busy machines' schedulers; the server's does
 * not, and the selection deadline is counted from the request's arrival at the server.
 */
final class AccessLog {

    /** One answered request: when the server finished it, what it was, and how long it took there. */
    record Entry(Instant answeredAt, String method, String path, int status, long millis) {

        Instant arrivedAt() {
            return answeredAt.minusMillis(millis);
        }
    }

    // 2026-12-02T12:09:02.954Z  INFO 1 --- [kvreuse] [...] reactor.netty.http.server.AccessLog : 127.0.0.1 - - [...]
    // "POST /api/v1/donor-selections HTTP/1.1" 200 636 12
    private static final Pattern LINE =
            Pattern.compile("^(\\S+)\\s.*AccessLog\\s*:.*\"(\\S+) (\\S+) [^\"]*\" (\\d{3}) \\S+ (\\d+)\\s*$");

    private AccessLog() {}

    static List<Entry> read(Path log) throws IOException {
        List<Entry> entries = new ArrayList<>();
        if (!Files.exists(log)) {
            return entries;
        }
        for (String line : Files.readAllLines(log)) {
            if (!line.contains("AccessLog")) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (m.matches()) {
                entries.add(new Entry(
                        Instant.parse(m.group(1)),
                        m.group(2),
                        m.group(3),
                        Integer.parseInt(m.group(4)),
                        Long.parseLong(m.group(5))));
            }
        }
        return entries;
    }
}
