package io.kvreuse.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@code docs/router-quickstart.md} read as a script: the set-up lines before the numbered calls,
 * then per call ({@code ## N. title}) its curl command and the answer shown for it. The reading is
 * strict: a line of a shell block that is not one of the few forms the guide uses, a call without
 * its answer, or a second block in a call is an error, so the guide cannot say something this
 * reading skips.
 */
final class QuickStartDoc {

    /** Where the guide's calls go; the test replaces it with the process under test. */
    static final String HOST = "localhost:8080";

    private static final Pattern CALL_HEADING = Pattern.compile("## (\\d+)\\. \\S.*");
    private static final Pattern CALL_COUNT = Pattern.compile("It takes \\*\\*(\\d+) calls\\*\\*");
    private static final Pattern HOME = Pattern.compile("export KVREUSE_HOME=(/\\S+)");
    private static final String START =
            "\"$JAVA_HOME/bin/java\" --enable-native-access=ALL-UNNAMED -jar app/target/kvreuse.jar";
    private static final Pattern TOKEN_FILE = Pattern.compile("([A-Z][A-Z0-9_]*)=\\$\\(cat (/\\S+)/bootstrap-token\\)");
    private static final String TEE = " | tee answer.json";
    private static final Pattern CURL = Pattern.compile(
            "curl -s -X (GET|POST|PUT|DELETE) " + Pattern.quote(HOST) + "(/\\S+)( \\\\|" + Pattern.quote(TEE) + ")");
    private static final Pattern AUTHORIZATION =
            Pattern.compile("  -H \"Authorization: Bearer \\$([A-Z][A-Z0-9_]*)\"( \\\\|" + Pattern.quote(TEE) + ")");
    private static final Pattern CONTENT_TYPE = Pattern.compile("  -H 'Content-Type: application/json' \\\\");
    private static final String BODY = "  -d @- <<JSON" + TEE;
    private static final Pattern KEEP =
            Pattern.compile("([A-Z][A-Z0-9_]*)=\\$\\(jq -r \\.([A-Za-z_][A-Za-z0-9_]*) answer\\.json\\)");
    private static final Pattern ANSWER = Pattern.compile("Answer `(\\d{3})`:");

    /** One call: what to send, and what the guide says comes back. */
    record Call(
            int number,
            String method,
            String path,
            String tokenVariable,
            boolean json,
            @Nullable String body,
            Map<String, String> keep,
            int status,
            String answer) {}

    final Path home;
    final String tokenVariable;
    final int statedCalls;
    final List<Call> calls;

    private QuickStartDoc(Path home, String tokenVariable, int statedCalls, List<Call> calls) {
        this.home = home;
        this.tokenVariable = tokenVariable;
        this.statedCalls = statedCalls;
        this.calls = calls;
    }

    static QuickStartDoc read(Path file) throws IOException {
        return parse(Files.readAllLines(file));
    }

    static QuickStartDoc parse(List<String> lines) {
        Path home = null;
        String tokenVariable = null;
        boolean started = false;
        Integer stated = null;
        List<Call> calls = new ArrayList<>();
        int number = 0;
        boolean inCalls = false;
        List<String> shell = null;
        String answer = null;
        Integer status = null;
        String lastText = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                String lang = line.substring(3).strip();
                List<String> block = new ArrayList<>();
                int end = i + 1;
                while (end < lines.size() && !lines.get(end).startsWith("```")) {
                    block.add(lines.get(end));
                    end++;
                }
                if (end == lines.size()) {
                    throw wrong(i, "a fenced block that never closes");
                }
                i = end;
                String introduced = lastText;
                lastText = null;
                if (!inCalls) {
                    if (!lang.equals("bash")) {
                        throw wrong(i, "only shell blocks may come before the calls");
                    }
                    for (String l : block) {
                        Matcher h = HOME.matcher(l);
                        Matcher t = TOKEN_FILE.matcher(l);
                        if (h.matches()) {
                            home = Path.of(h.group(1));
                        } else if (l.equals(START)) {
                            if (home == null) {
                                throw wrong(i, "the control plane starts before KVREUSE_HOME is set");
                            }
                            started = true;
                        } else if (t.matches()) {
                            if (!started || home == null || !Path.of(t.group(2)).equals(home)) {
                                throw wrong(
                                        i, "the token is read from a file other than $KVREUSE_HOME/bootstrap-token");
                            }
                            tokenVariable = t.group(1);
                        } else {
                            throw wrong(i, "a set-up line this test does not run: " + l);
                        }
                    }
                    continue;
                }
                if (lang.equals("bash")) {
                    if (shell != null) {
                        throw wrong(i, "call " + number + " has a second shell block");
                    }
                    shell = block;
                } else if (lang.equals("json")) {
                    if (shell == null || answer != null) {
                        throw wrong(i, "call " + number + " shows an answer before its call, or two answers");
                    }
                    Matcher a = ANSWER.matcher(introduced == null ? "" : introduced);
                    if (!a.matches()) {
                        throw wrong(i, "call " + number + "'s answer is not introduced by \"Answer `NNN`:\"");
                    }
                    status = Integer.parseInt(a.group(1));
                    answer = String.join("\n", block);
                } else {
                    throw wrong(i, "call " + number + " has a block that is neither bash nor json");
                }
                continue;
            }
            Matcher count = CALL_COUNT.matcher(line);
            if (count.find()) {
                stated = Integer.parseInt(count.group(1));
            }
            Matcher heading = CALL_HEADING.matcher(line);
            if (line.startsWith("## ") || line.startsWith("# ")) {
                if (inCalls) {
                    calls.add(call(number, shell, status, answer, i));
                    shell = null;
                    answer = null;
                    status = null;
                }
                if (heading.matches()) {
                    int n = Integer.parseInt(heading.group(1));
                    if (n != number + 1) {
                        throw wrong(i, "call " + n + " follows call " + number);
                    }
                    number = n;
                    inCalls = true;
                } else {
                    inCalls = false;
                    if (number > 0) {
                        break;
                    }
                }
            }
            if (!line.isBlank()) {
                lastText = line;
            }
        }
        if (inCalls) {
            calls.add(call(number, shell, status, answer, lines.size()));
        }
        if (home == null || !started || tokenVariable == null) {
            throw new IllegalStateException(
                    "the guide must set KVREUSE_HOME, start the control plane and read the bootstrap token first");
        }
        if (stated == null) {
            throw new IllegalStateException("the guide must say how many calls it takes (\"It takes **N calls**\")");
        }
        return new QuickStartDoc(home, tokenVariable, stated, calls);
    }

    private static Call call(
            int number, @Nullable List<String> shell, @Nullable Integer status, @Nullable String answer, int line) {
        if (shell == null || answer == null || status == null) {
            throw wrong(line, "call " + number + " needs one shell block and one answer");
        }
        int i = 0;
        Matcher curl = CURL.matcher(shell.get(i));
        if (!curl.matches()) {
            throw wrong(
                    line, "call " + number + " must start with `curl -s -X METHOD " + HOST + "/path`: " + shell.get(0));
        }
        String method = curl.group(1);
        String path = curl.group(2);
        boolean done = curl.group(3).equals(TEE);
        String token = null;
        boolean json = false;
        String body = null;
        while (!done) {
            i++;
            if (i >= shell.size()) {
                throw wrong(line, "call " + number + "'s curl command does not end with `" + TEE.strip() + "`");
            }
            String l = shell.get(i);
            Matcher auth = AUTHORIZATION.matcher(l);
            if (auth.matches() && token == null) {
                token = auth.group(1);
                done = auth.group(2).equals(TEE);
            } else if (CONTENT_TYPE.matcher(l).matches() && !json) {
                json = true;
            } else if (l.equals(BODY) && json) {
                List<String> text = new ArrayList<>();
                i++;
                while (i < shell.size() && !shell.get(i).equals("JSON")) {
                    text.add(shell.get(i));
                    i++;
                }
                if (i == shell.size()) {
                    throw wrong(line, "call " + number + "'s body does not end with a line `JSON`");
                }
                body = String.join("\n", text);
                done = true;
            } else {
                throw wrong(line, "call " + number + " has a line this test does not run: " + l);
            }
        }
        if (token == null) {
            throw wrong(line, "call " + number + " sends no Authorization header");
        }
        if (json && body == null) {
            throw wrong(line, "call " + number + " declares a JSON body but sends none");
        }
        Map<String, String> keep = new LinkedHashMap<>();
        for (i++; i < shell.size(); i++) {
            Matcher k = KEEP.matcher(shell.get(i));
            if (!k.matches()) {
                throw wrong(line, "call " + number + " has a line this test does not run: " + shell.get(i));
            }
            keep.put(k.group(1), k.group(2));
        }
        return new Call(number, method, path, token, json, body, keep, status, answer);
    }

    private static IllegalStateException wrong(int line, String what) {
        return new IllegalStateException("docs/router-quickstart.md, near line " + (line + 1) + ": " + what);
    }
}
