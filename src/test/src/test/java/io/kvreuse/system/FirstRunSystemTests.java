package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A newcomer's first run: the built jar started as the README and the router quick start say, on
 * a fresh data directory. The start-up banner says where everything is, and the calls of
 * {@code docs/router-quickstart.md}, run exactly as written, end in a HINT with every answer as
 * the guide shows it.
 */
class FirstRunSystemTests {

    private static final Path GUIDE = repositoryRoot().resolve("docs/router-quickstart.md");
    private static final Pattern VARIABLE = Pattern.compile("\\$([A-Z][A-Z0-9_]*)");
    private static final String BANNER = "kvreuse control plane is ready";

    @TempDir
    static Path home;

    private static KvReuseProcess kvreuse;

    @BeforeAll
    static void startAsANewcomerDoes() throws Exception {
        kvreuse = KvReuseProcess.startEmbedded(home);
    }

    @AfterAll
    static void stop() throws Exception {
        if (kvreuse != null) {
            kvreuse.close();
        }
    }

    @Test
    void startUpLogsOneBannerWithTheDashboardTheApiDocsAndTheTokenFile() throws Exception {
        String port = URI.create(kvreuse.baseUrl()).getPort() + "";
        Path tokenFile = home.resolve("bootstrap-token");
        List<String> log = Files.readAllLines(logFile());
        int banners = 0;
        int at = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).contains(BANNER)) {
                banners++;
                at = i;
            }
        }
        assertThat(banners).as("banners in the log").isEqualTo(1);
        List<String> banner = log.subList(at, Math.min(log.size(), at + 5));
        assertThat(banner.get(1)).isEqualTo("  dashboard:      http://localhost:" + port + "/login");
        assertThat(banner.get(2))
                .isEqualTo("  API docs:       http://localhost:" + port
                        + "/swagger-ui.html (once signed in to the dashboard)");
        assertThat(banner.get(3))
                .isEqualTo("  OpenAPI:        http://localhost:" + port + "/v3/api-docs (with any API token)");
        assertThat(banner.get(4)).isEqualTo("  operator token: in the file " + tokenFile.toAbsolutePath());
        // the token's location is said once, in the banner, not also on a line of its own
        assertThat(log.stream().filter(l -> l.contains(tokenFile.toString())).count())
                .isEqualTo(1);
        assertThat(String.join("\n", log)).doesNotContain("bootstrap operator token is in");

        // what the banner names exists: the sign-in page, and the API document for the token in the file
        String token = Files.readString(tokenFile).strip();
        assertThat(send("GET", "/login", null, null).status()).isEqualTo(200);
        Answer docs = send("GET", "/v3/api-docs", token, null);
        assertThat(docs.status()).isEqualTo(200);
        assertThat(KvReuseClient.JSON.readTree(docs.body()).get("paths").has("/api/v1/donor-selections"))
                .isTrue();
    }

    @Test
    void theRouterQuickStartRunsAsWrittenAndEndsInAHint() throws Exception {
        QuickStartDoc guide = QuickStartDoc.read(GUIDE);
        assertThat(guide.calls).as("calls in the guide").hasSize(guide.statedCalls);
        // issue 17: a newcomer reaches a HINT in at most 8 calls
        assertThat(guide.statedCalls).as("calls the guide states").isLessThanOrEqualTo(8);
        assertThat(guide.calls).isNotEmpty();

        Map<String, String> kept = new HashMap<>();
        kept.put(
                guide.tokenVariable,
                Files.readString(home.resolve("bootstrap-token")).strip());
        Answer last = null;
        for (QuickStartDoc.Call call : guide.calls) {
            String path = substitute(call.path(), kept, call);
            String token = kept.get(call.tokenVariable());
            assertThat(token)
                    .as("call %d: $%s is kept before it is used", call.number(), call.tokenVariable())
                    .isNotNull();
            String body = call.body() == null ? null : substitute(call.body(), kept, call);
            Answer response = send(call.method(), path, token, body);
            String where = "call " + call.number() + " (" + call.method() + " " + call.path() + ") answered "
                    + response.status() + " " + response.body();
            assertThat(response.status()).as(where).isEqualTo(call.status());
            JsonNode actual = KvReuseClient.JSON.readTree(response.body());
            JsonNode expected = KvReuseClient.JSON.readTree(call.answer());
            List<String> differences = new ArrayList<>();
            compare("$", expected, actual, kept, differences);
            assertThat(differences).as(where).isEmpty();
            for (var keep : call.keep().entrySet()) {
                JsonNode value = actual.get(keep.getValue());
                assertThat(value)
                        .as("call %d keeps %s", call.number(), keep.getValue())
                        .isNotNull();
                kept.put(keep.getKey(), value.asString());
            }
            last = response;
        }
        QuickStartDoc.Call final_ = guide.calls.getLast();
        assertThat(final_.method() + " " + final_.path()).isEqualTo("POST /api/v1/donor-selections");
        JsonNode answer = KvReuseClient.JSON.readTree(last.body());
        assertThat(answer.get("decision").asString()).isEqualTo("HINT");
        assertThat(answer.get("reason")).as("a hint has no no-hint reason").isNull();
        assertThat(answer.get("hint").get("actions").get(0).get("action_type").asString())
                .isEqualTo("kv.fetch_gpu");
    }

    @Test
    void theGuideIsReadStrictlySoAnEditItDoesNotRunFailsTheReading() throws Exception {
        List<String> lines = Files.readAllLines(GUIDE);
        QuickStartDoc.parse(lines);
        int curl = indexOf(lines, "curl -s -X POST localhost:8080/api/v1/donor-selections \\");
        for (List<String> edited : List.of(
                with(lines, curl + 1, "  -H \"Authorization: Bearer $ROUTER_TOKEN\" -v \\"),
                with(lines, curl, "curl -s -X POST localhost:8080/api/v1/donor-selections --retry 3 \\"),
                without(lines, indexOf(lines, "Answer `201`:")),
                with(lines, indexOf(lines, "TOKEN=$(cat /tmp/kvreuse-quickstart/bootstrap-token)"), "TOKEN=kvr_x"),
                with(
                        lines,
                        indexOf(lines, "## 8. The router asks for a donor"),
                        "## 9. The router asks for a donor"))) {
            try {
                QuickStartDoc.parse(edited);
                fail("an edit the test would not run was read without complaint");
            } catch (IllegalStateException expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        }
    }

    @Test
    void anAnswerUnlikeTheOneShownIsADifference() {
        Map<String, String> kept = Map.of("DONOR_ID", "444410cb-ffbf-4e8b-8683-8683e817be57");
        JsonNode shown = KvReuseClient.JSON.readTree(
                "{\"incarnationId\": \"$DONOR_ID\", \"state\": \"READY\", \"fencingEpoch\": 2, \"at\": \"…Z\"}");
        List<String> same = new ArrayList<>();
        compare(
                "$",
                shown,
                KvReuseClient.JSON.readTree(
                        "{\"incarnationId\": \"444410cb-ffbf-4e8b-8683-8683e817be57\", \"state\": \"READY\","
                                + " \"fencingEpoch\": 2, \"at\": \"2026-12-01T13:12:03Z\"}"),
                kept,
                same);
        assertThat(same).isEmpty();
        String id = "\"incarnationId\": \"444410cb-ffbf-4e8b-8683-8683e817be57\"";
        for (String answer : List.of(
                "{\"incarnationId\": \"another\", \"state\": \"READY\", \"fencingEpoch\": 2, \"at\": \"xZ\"}",
                "{" + id + ", \"state\": \"SUSPECT\", \"fencingEpoch\": 2, \"at\": \"xZ\"}",
                "{" + id + ", \"state\": \"READY\", \"fencingEpoch\": 3, \"at\": \"xZ\"}",
                "{" + id + ", \"state\": \"READY\", \"fencingEpoch\": \"2\", \"at\": \"xZ\"}",
                "{" + id + ", \"state\": \"READY\", \"fencingEpoch\": 2, \"at\": \"Z\"}",
                "{" + id + ", \"state\": \"READY\", \"fencingEpoch\": 2}",
                "{" + id + ", \"state\": \"READY\", \"fencingEpoch\": 2, \"at\": \"xZ\", \"extra\": 1}")) {
            List<String> differences = new ArrayList<>();
            compare("$", shown, KvReuseClient.JSON.readTree(answer), kept, differences);
            assertThat(differences).as(answer).isNotEmpty();
        }
    }

    /** Shell expansion inside the guide's double-quoted strings and heredocs: only variables kept earlier. */
    private static String substitute(String text, Map<String, String> kept, QuickStartDoc.Call call) {
        Matcher m = VARIABLE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = kept.get(m.group(1));
            assertThat(value)
                    .as("call %d uses $%s before an earlier call keeps it", call.number(), m.group(1))
                    .isNotNull();
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * The answer must have exactly the fields the guide shows, with its values; a string holding
     * {@code …} matches any text in its place, one holding {@code $NAME} the value kept as NAME.
     */
    private static void compare(
            String at, JsonNode expected, JsonNode actual, Map<String, String> kept, List<String> out) {
        if (expected.isObject()) {
            if (!actual.isObject()) {
                out.add(at + ": expected an object, got " + actual);
                return;
            }
            Set<String> want = new TreeSet<>(expected.propertyNames());
            Set<String> got = new TreeSet<>(actual.propertyNames());
            if (!want.equals(got)) {
                Set<String> missing = new TreeSet<>(want);
                missing.removeAll(got);
                Set<String> extra = new TreeSet<>(got);
                extra.removeAll(want);
                out.add(at + ": fields missing " + missing + ", not in the guide " + extra);
            }
            for (String name : want) {
                if (actual.has(name)) {
                    compare(at + "." + name, expected.get(name), actual.get(name), kept, out);
                }
            }
        } else if (expected.isArray()) {
            if (!actual.isArray() || actual.size() != expected.size()) {
                out.add(at + ": expected " + expected + ", got " + actual);
                return;
            }
            for (int i = 0; i < expected.size(); i++) {
                compare(at + "[" + i + "]", expected.get(i), actual.get(i), kept, out);
            }
        } else if (expected.isString()) {
            if (!actual.isString() || !matches(expected.asString(), actual.asString(), kept)) {
                out.add(at + ": expected " + expected + ", got " + actual);
            }
        } else if (expected.isNumber()) {
            if (!actual.isNumber() || expected.decimalValue().compareTo(actual.decimalValue()) != 0) {
                out.add(at + ": expected " + expected + ", got " + actual);
            }
        } else if (!expected.equals(actual)) {
            out.add(at + ": expected " + expected + ", got " + actual);
        }
    }

    private static boolean matches(String shown, String actual, Map<String, String> kept) {
        StringBuilder regex = new StringBuilder();
        Matcher m = Pattern.compile("…|\\$([A-Z][A-Z0-9_]*)").matcher(shown);
        int from = 0;
        while (m.find()) {
            regex.append(Pattern.quote(shown.substring(from, m.start())));
            if (m.group(1) == null) {
                regex.append(".+");
            } else {
                String value = kept.get(m.group(1));
                if (value == null) {
                    return false;
                }
                regex.append(Pattern.quote(value));
            }
            from = m.end();
        }
        regex.append(Pattern.quote(shown.substring(from)));
        return actual.matches(regex.toString());
    }

    private Answer send(String method, String path, String token, String body) {
        return new KvReuseClient(kvreuse.baseUrl()).send(method, path, token, body, Duration.ofSeconds(30));
    }

    private static int indexOf(List<String> lines, String line) {
        int i = lines.indexOf(line);
        assertThat(i).as("the guide has the line %s", line).isNotNegative();
        return i;
    }

    private static List<String> with(List<String> lines, int i, String line) {
        List<String> copy = new ArrayList<>(lines);
        copy.set(i, line);
        return copy;
    }

    private static List<String> without(List<String> lines, int i) {
        List<String> copy = new ArrayList<>(lines);
        copy.remove(i);
        return copy;
    }

    private static Path logFile() throws Exception {
        try (var files = Files.list(home)) {
            return files.filter(f -> f.getFileName().toString().matches("kvreuse-\\d+\\.log"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("not inside the kvreuse repository");
        }
        return dir;
    }
}
