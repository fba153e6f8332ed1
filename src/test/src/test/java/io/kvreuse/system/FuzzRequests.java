package io.kvreuse.system;

import io.kvreuse.testkit.KvReuseClient;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Generators of bad requests for one operation of the OpenAPI document.
 *
 * <p>{@link #rejected} makes requests that are wrong in at least one way the contract says must be
 * refused (no or an invalid token, a role or owner the policy refuses, a malformed or mistyped or
 * incomplete or out-of-range or oversized body, a malformed or unknown path id, a malformed query
 * or header number), so every one of them must get a 4xx and none may change anything.
 *
 * <p>{@link #boundary} makes requests from an allowed caller that are well-formed except for one
 * boundary value (0, -1, the int and long limits, 2^63, 2^64, u64 hashes as decimal, hex or
 * garbage, odd strings): some may be accepted, none may fail with a 5xx.
 */
final class FuzzRequests {

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final BigInteger TWO_63 = BigInteger.ONE.shiftLeft(63);
    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);
    /** Over the 4 MB body limit ({@code spring.http.codecs.max-in-memory-size}). */
    static final int OVERSIZED = 4 * 1024 * 1024 + 4096;

    /** What a request must get: exactly {@code status}, or (0) any 4xx, or (-1) anything but a 5xx. */
    record Fuzz(RawHttp.Request request, int status) {

        static final int ANY_4XX = 0;
        static final int NOT_5XX = -1;
    }

    private final PopulatedFleet fleet;
    private final SchemaValues values;

    FuzzRequests(PopulatedFleet fleet, SchemaValues values) {
        this.fleet = fleet;
        this.values = values;
    }

    // ---------------------------------------------------------------- rejected: every request wrong

    Arbitrary<Fuzz> rejected(OpenApiDocument.Operation op) {
        List<Arbitrary<Fuzz>> kinds = new ArrayList<>();
        kinds.add(unauthenticated(op));
        for (Caller c : List.of(Caller.ROUTER, Caller.ENGINE, Caller.AGENT, Caller.OPERATOR)) {
            AccessPolicy.Expected e = AccessPolicy.expected(op.key(), c);
            if (e != AccessPolicy.Expected.ALLOWED) {
                kinds.add(anyBody(op, c).map(r -> new Fuzz(r.because(c + " may not call it"), e.status())));
            } else {
                kinds.addAll(defects(op, c));
            }
        }
        for (Caller c : List.of(Caller.FOREIGN_ENGINE, Caller.FOREIGN_AGENT)) {
            AccessPolicy.Expected e = AccessPolicy.expected(op.key(), c);
            if (e != AccessPolicy.Expected.ALLOWED) {
                kinds.add(Arbitraries.just(
                        new Fuzz(values.request(op, fleet.tokens.get(c)).because(c + " does not own it"), e.status())));
            }
        }
        return Arbitraries.oneOf(kinds);
    }

    private Arbitrary<Fuzz> unauthenticated(OpenApiDocument.Operation op) {
        String operator = fleet.tokens.get(Caller.OPERATOR);
        List<String> headers = new ArrayList<>();
        fleet.invalidTokens.forEach(t -> headers.add("Bearer " + t));
        headers.addAll(List.of(
                "Basic "
                        + Base64.getEncoder().encodeToString(("operator:" + operator).getBytes(StandardCharsets.UTF_8)),
                "Token " + operator,
                operator,
                "Bearer " + operator + " " + operator,
                "Bearer \u00e9\u00e8"));
        Arbitrary<String> authorization = Arbitraries.oneOf(Arbitraries.of(headers), Arbitraries.just(null));
        return Combinators.combine(authorization, anyBody(op, Caller.OPERATOR)).as((auth, r) -> {
            RawHttp.Request req = r.withoutHeader("Authorization");
            if (auth != null) {
                req = req.header("Authorization", auth.replaceAll("[\\r\\n]", ""));
            }
            return new Fuzz(req.because(auth == null ? "no token" : "invalid token"), 401);
        });
    }

    /** A request by {@code caller}, well-formed or not (for callers refused before the body is read). */
    private Arbitrary<RawHttp.Request> anyBody(OpenApiDocument.Operation op, Caller caller) {
        RawHttp.Request valid = values.request(op, fleet.tokens.get(caller));
        if (op.body() == null) {
            return Arbitraries.just(valid);
        }
        return Arbitraries.oneOf(Arbitraries.just(valid), malformedJson(valid), mistyped(op, valid));
    }

    private List<Arbitrary<Fuzz>> defects(OpenApiDocument.Operation op, Caller c) {
        RawHttp.Request valid = values.request(op, fleet.tokens.get(c));
        List<Arbitrary<Fuzz>> kinds = new ArrayList<>();
        if (op.body() != null) {
            kinds.add(malformedJson(valid).map(r -> new Fuzz(r, Fuzz.ANY_4XX)));
            kinds.add(mistyped(op, valid).map(r -> new Fuzz(r, Fuzz.ANY_4XX)));
            kinds.add(withExtras(outOfContract(op, valid)).map(r -> new Fuzz(r, Fuzz.ANY_4XX)));
            kinds.add(Arbitraries.just(new Fuzz(oversized(valid), 413)));
            Arbitrary<RawHttp.Request> lenient = lenientJson(op, valid);
            if (lenient != null) {
                kinds.add(lenient.map(r -> new Fuzz(r, 400)));
            }
            kinds.add(Arbitraries.of("UTF-16", "utf-16le", "UTF-32", "ISO-8859-1", "\"windows-1252\"")
                    .map(cs -> new Fuzz(
                            valid.header("Content-Type", "application/json; charset=" + cs)
                                    .because("a charset other than UTF-8: " + cs),
                            415)));
            kinds.add(Arbitraries.of("text/plain", "application/xml", "application/x-www-form-urlencoded")
                    .map(ct ->
                            new Fuzz(valid.header("Content-Type", ct).because("unsupported media type " + ct), 415)));
            if (op.bodyRequired()) {
                kinds.add(Arbitraries.of("", "null", " ", "\"\"")
                        .map(b -> new Fuzz(valid.json(b).because("no body: '" + b + "'"), Fuzz.ANY_4XX)));
            }
        }
        if (!op.in("path").isEmpty()) {
            kinds.add(badPath(op, valid).map(r -> new Fuzz(r, Fuzz.ANY_4XX)));
        }
        List<OpenApiDocument.Param> numbers = new ArrayList<>();
        for (OpenApiDocument.Param p : op.params()) {
            if (!p.in().equals("path") && isNumberOrUuid(p.schema())) {
                numbers.add(p);
            }
        }
        if (!numbers.isEmpty()) {
            kinds.add(Combinators.combine(Arbitraries.of(numbers), Arbitraries.of(badScalars()))
                    .as((p, v) -> new Fuzz(param(op, valid, p, v), Fuzz.ANY_4XX)));
        }
        if (kinds.isEmpty()) {
            // nothing to get wrong but the caller: a token that is not one
            kinds.add(unauthenticated(op));
        }
        return kinds;
    }

    private static boolean isNumberOrUuid(JsonNode schema) {
        String type = schema.path("type").asString("");
        return type.equals("integer") || "uuid".equals(schema.path("format").asString(""));
    }

    /** Values no integer or uuid parameter accepts. */
    private static List<String> badScalars() {
        return List.of(
                "abc",
                "1e3",
                "1.5",
                TWO_63.toString(),
                TWO_64.toString(),
                "-" + TWO_64,
                "99999999999999999999999999999",
                "%00",
                "' OR 1=1 --",
                "NaN");
    }

    private RawHttp.Request param(
            OpenApiDocument.Operation op, RawHttp.Request valid, OpenApiDocument.Param p, String v) {
        if (p.in().equals("header")) {
            return valid.header(p.name(), v.replaceAll("[^\\x20-\\x7e]", "?")).because("bad header " + p.name());
        }
        String sep = valid.path().contains("?") ? "&" : "?";
        return new RawHttp.Request(
                valid.method(),
                valid.path() + sep + SchemaValues.encode(p.name()) + "=" + SchemaValues.encode(v),
                valid.headers(),
                valid.body(),
                "bad query " + p.name() + "=" + v);
    }

    private Arbitrary<RawHttp.Request> badPath(OpenApiDocument.Operation op, RawHttp.Request valid) {
        return Combinators.combine(Arbitraries.of(op.in("path")), pathValues()).as((p, v) -> {
            String raw = v.equals("<unknown>") ? unknown(p.schema()) : v;
            return new RawHttp.Request(
                    valid.method(),
                    values.path(op, Map.of(p.name(), raw)),
                    valid.headers(),
                    valid.body(),
                    "path " + p.name() + "=" + (raw.length() > 40 ? raw.substring(0, 40) + "…" : raw));
        });
    }

    private static String unknown(JsonNode schema) {
        String type = schema.path("type").asString("");
        if (type.equals("integer")) {
            return "4242";
        }
        if ("uuid".equals(schema.path("format").asString(""))) {
            return UUID.randomUUID().toString();
        }
        return "unknown-" + UUID.randomUUID();
    }

    private static Arbitrary<String> pathValues() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "<unknown>",
                        "not-a-uuid",
                        "00000000-0000-0000-0000-00000000000g",
                        "-1",
                        "2147483648",
                        TWO_64.toString(),
                        "..",
                        " ",
                        "%2e%2e",
                        "\u0000",
                        "\u00e9t\u00e9",
                        "{id}",
                        "' OR 1=1 --"),
                Arbitraries.strings()
                        .withCharRange('0', 'z')
                        .ofMinLength(300)
                        .ofMaxLength(1500)
                        .map(s -> "x" + s));
    }

    private Arbitrary<RawHttp.Request> malformedJson(RawHttp.Request valid) {
        String text = new String(valid.body(), StandardCharsets.UTF_8);
        return Arbitraries.oneOf(
                        Arbitraries.integers()
                                .between(1, Math.max(1, text.length() - 1))
                                .map(n -> text.substring(0, n)),
                        Arbitraries.of(
                                "{",
                                "}",
                                "{\"a\":}",
                                "{'single': 'quotes'}",
                                "{\"a\":1,}",
                                text + "}",
                                text + text,
                                "\u0000\u0001\u0002",
                                "{\"a\":\"\\uZZZZ\"}",
                                "{\"a\":NaN}",
                                "{\"a\":01}",
                                "<xml/>",
                                "[".repeat(5000) + "]".repeat(5000),
                                "{\"a\":".repeat(3000) + "1" + "}".repeat(3000),
                                "{\"a\":\"" + "\\".repeat(3) + "\"}"))
                .map(b -> valid.json(b).because("malformed JSON"));
    }

    /**
     * What a lenient reader would guess at: a duplicate key, an integer as {@code "5"} or {@code 1.5},
     * a u64 hash as a JSON number or in non-ASCII digits, a lone surrogate, an overlong UTF-8 byte
     * sequence, a UTF-16 body. Null when the body is no object.
     */
    private @org.jspecify.annotations.Nullable Arbitrary<RawHttp.Request> lenientJson(
            OpenApiDocument.Operation op, RawHttp.Request valid) {
        JsonNode body = KvReuseClient.JSON.readTree(valid.body());
        if (!(body instanceof ObjectNode object) || object.isEmpty()) {
            return null;
        }
        String text = body.toString();
        String first = object.propertyNames().iterator().next();
        List<RawHttp.Request> cases = new ArrayList<>();
        cases.add(valid.json("{\"" + first + "\":" + object.get(first) + "," + text.substring(1))
                .because("duplicate key " + first));
        cases.add(valid.body("application/json", text.getBytes(StandardCharsets.UTF_16))
                .because("a UTF-16 body sent as application/json"));
        for (SchemaValues.Field f : SchemaValues.fields(op.body())) {
            String type = f.schema().path("type").asString("object");
            if (f.at().isEmpty()) {
                continue;
            }
            if (type.equals("integer")) {
                cases.add(valid.json(SchemaValues.with(body, f.at(), F.stringNode("5"))
                                .toString())
                        .because("integer as a string at " + f));
                cases.add(valid.json(SchemaValues.with(body, f.at(), F.numberNode(1.5))
                                .toString())
                        .because("integer as a fraction at " + f));
            } else if (type.equals("string") && SchemaValues.isHash(f.name())) {
                cases.add(valid.json(SchemaValues.with(body, f.at(), F.numberNode(12345))
                                .toString())
                        .because("hash as a JSON number at " + f));
                cases.add(valid.json(SchemaValues.with(body, f.at(), F.stringNode("\u0661\u0662\u0663"))
                                .toString())
                        .because("hash in Arabic-Indic digits at " + f));
            } else if (type.equals("string")
                    && !f.schema().has("enum")
                    && !f.schema().has("format")) {
                String marker = "lenient-" + UUID.randomUUID();
                String withMarker =
                        SchemaValues.with(body, f.at(), F.stringNode(marker)).toString();
                cases.add(valid.json(withMarker.replace(marker, "a\\ud800b")).because("lone surrogate at " + f));
                byte[] overlong = overlong(withMarker, marker);
                cases.add(valid.body("application/json", overlong).because("overlong UTF-8 (C0 AF) at " + f));
            }
        }
        return Arbitraries.of(cases);
    }

    /** {@code json} with {@code marker} replaced by {@code a}, the overlong form C0 AF of {@code /}, and {@code b}. */
    private static byte[] overlong(String json, String marker) {
        int at = json.indexOf(marker);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(json.substring(0, at).getBytes(StandardCharsets.UTF_8));
        out.writeBytes(new byte[] {'a', (byte) 0xC0, (byte) 0xAF, 'b'});
        out.writeBytes(json.substring(at + marker.length()).getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    /** The whole body or one field (present or optional) of the wrong JSON type. */
    private Arbitrary<RawHttp.Request> mistyped(OpenApiDocument.Operation op, RawHttp.Request valid) {
        JsonNode body = KvReuseClient.JSON.readTree(valid.body());
        List<SchemaValues.Field> fields = SchemaValues.fields(op.body());
        return Arbitraries.of(fields)
                .flatMap(f -> Arbitraries.of(wrongTypes(f.schema()))
                        .map(v -> valid.json(SchemaValues.with(body, f.at(), v).toString())
                                .because("wrong type at " + f + ": " + abbreviate(v))));
    }

    /** JSON values that no field of this schema's type accepts (Jackson's lenient scalar coercions avoided). */
    private static List<JsonNode> wrongTypes(JsonNode schema) {
        String type = schema.path("type").asString("object");
        ObjectNode object = F.objectNode().put("x", 1);
        ArrayNode array = F.arrayNode().add(1).add(2);
        return switch (type) {
            case "string" -> List.of(object, array);
            case "integer", "number" -> List.of(F.stringNode("abc"), object, array);
            case "boolean" -> List.of(F.stringNode("maybe"), object, array);
            case "array" -> List.of(object, F.stringNode("abc"), F.numberNode(5));
            default -> List.of(F.stringNode("abc"), F.numberNode(5), array, F.booleanNode(true));
        };
    }

    /** One field given a value outside what the schema allows, or a required field left out. */
    private Arbitrary<RawHttp.Request> outOfContract(OpenApiDocument.Operation op, RawHttp.Request valid) {
        JsonNode body = KvReuseClient.JSON.readTree(valid.body());
        List<Map.Entry<SchemaValues.Field, JsonNode>> cases = new ArrayList<>();
        for (SchemaValues.Field f : SchemaValues.fields(op.body())) {
            if (f.required() && !f.at().isEmpty() && !(f.at().getLast() instanceof Integer)) {
                cases.add(Map.entry(f, F.missingNode()));
            }
            for (JsonNode v : outOfRange(f)) {
                cases.add(Map.entry(f, v));
            }
        }
        if (cases.isEmpty()) {
            return Arbitraries.just(valid.json("[]").because("an array for an object body"));
        }
        return Arbitraries.of(cases).map(c -> {
            JsonNode v = c.getValue().isMissingNode() ? null : c.getValue();
            String what = v == null
                    ? "required field left out: " + c.getKey()
                    : "out of contract at " + c.getKey() + ": " + abbreviate(v);
            return valid.json(SchemaValues.with(body, c.getKey().at(), v).toString())
                    .because(what);
        });
    }

    private static List<JsonNode> outOfRange(SchemaValues.Field f) {
        JsonNode s = f.schema();
        String type = s.path("type").asString("object");
        List<JsonNode> out = new ArrayList<>();
        switch (type) {
            case "integer", "number" -> {
                if (s.has("minimum")) {
                    BigInteger min = s.get("minimum").bigIntegerValue();
                    out.add(F.numberNode(min.subtract(BigInteger.ONE)));
                    out.add(F.numberNode(min.subtract(TWO_64)));
                    if (min.signum() >= 0) {
                        out.add(F.numberNode(-1));
                    }
                }
                if (s.has("maximum")) {
                    out.add(F.numberNode(s.get("maximum").bigIntegerValue().add(BigInteger.ONE)));
                }
                // past a long whatever the bounds
                out.add(F.numberNode(TWO_63));
                out.add(F.numberNode(TWO_64));
                out.add(F.numberNode(new java.math.BigDecimal("1e400")));
                if ("int32".equals(s.path("format").asString(""))) {
                    out.add(F.numberNode(2_147_483_648L));
                }
            }
            case "string" -> {
                if (s.has("enum")) {
                    out.add(F.stringNode("NOT_" + s.get("enum").get(0).asString()));
                    out.add(F.stringNode(s.get("enum").get(0).asString().toLowerCase() + "x"));
                }
                if (s.has("maxLength")) {
                    out.add(F.stringNode("x".repeat(s.get("maxLength").asInt() + 1)));
                }
                if (s.path("minLength").asInt(0) > 0) {
                    out.add(F.stringNode(""));
                }
                if (s.has("pattern")) {
                    for (String bad : List.of("has space", "-", "!", "\u00e9")) {
                        if (!Pattern.matches(s.get("pattern").asString(), bad)) {
                            out.add(F.stringNode(bad));
                            break;
                        }
                    }
                }
                if ("uuid".equals(s.path("format").asString(""))) {
                    out.add(F.stringNode("not-a-uuid"));
                    out.add(F.stringNode(UUID.randomUUID() + "0"));
                }
                if (f.name().endsWith("Endpoint")) {
                    for (String e : List.of(
                            "http://169.254.169.254/latest/meta-data/",
                            "tcp://169.254.169.254:80",
                            "file:///etc/passwd",
                            "gopher://h:70/_x",
                            "javascript:alert(1)",
                            "tcp://user:pw@h:5557",
                            "tcp://h:0",
                            "tcp://h:65536",
                            "tcp://h:5557\r\nX: 1",
                            "tcp://h\u202e:5557",
                            "tcp://h:5557/path")) {
                        out.add(F.stringNode(e));
                    }
                }
                if (f.name().equals("regionRef")) {
                    for (String r : List.of(
                            "shm://../../../etc/passwd",
                            "shm://a/../b",
                            "file:///etc/passwd",
                            "http://169.254.169.254/",
                            "shm://a\nb",
                            "cuda-ipc://0/short?size=1")) {
                        out.add(F.stringNode(r));
                    }
                }
                if (SchemaValues.isHash(f.name())) {
                    for (String h : List.of(
                            "xyz",
                            "-1",
                            TWO_64.toString(),
                            "0x1" + "0".repeat(16),
                            "0x",
                            "0xZZ",
                            "",
                            "1.5",
                            "1e5",
                            " 1",
                            "99999999999999999999999999")) {
                        out.add(F.stringNode(h));
                    }
                }
            }
            case "array" -> {
                if (s.path("minItems").asInt(0) > 0) {
                    out.add(F.arrayNode());
                }
                if (s.has("maxItems") && s.get("maxItems").asInt() < 100_000) {
                    ArrayNode a = F.arrayNode();
                    JsonNode item = s.get("items").path("type").asString("").equals("string")
                            ? F.stringNode("1")
                            : F.objectNode();
                    for (int i = 0; i <= s.get("maxItems").asInt(); i++) {
                        a.add(item);
                    }
                    out.add(a);
                }
            }
            default -> {}
        }
        return out;
    }

    private Arbitrary<RawHttp.Request> withExtras(Arbitrary<RawHttp.Request> requests) {
        Arbitrary<Boolean> extra = Arbitraries.of(true, false);
        return Combinators.combine(requests, extra).as((r, add) -> {
            if (!add) {
                return r;
            }
            JsonNode body = KvReuseClient.JSON.readTree(r.body());
            if (!(body instanceof ObjectNode o)) {
                return r;
            }
            ObjectNode copy = o.deepCopy();
            copy.put("unexpectedField", "x");
            copy.set("__proto__", F.objectNode().put("admin", true));
            return r.json(copy.toString()).because(r.why() + " + extra fields");
        });
    }

    private static RawHttp.Request oversized(RawHttp.Request valid) {
        byte[] prefix = "{\"padding\":\"".getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[OVERSIZED];
        java.util.Arrays.fill(body, (byte) 'a');
        System.arraycopy(prefix, 0, body, 0, prefix.length);
        body[body.length - 2] = '"';
        body[body.length - 1] = '}';
        return valid.body("application/json", body).because("body over the 4 MB limit");
    }

    // ---------------------------------------------------------------- boundary: anything but a 5xx

    Arbitrary<Fuzz> boundary(OpenApiDocument.Operation op) {
        Caller caller = allowed(op);
        if (caller == null) {
            return Arbitraries.just(new Fuzz(values.request(op, null).because("no caller allowed"), 401));
        }
        RawHttp.Request valid = values.request(op, fleet.tokens.get(caller));
        List<Arbitrary<Fuzz>> kinds = new ArrayList<>();
        if (op.body() != null) {
            JsonNode body = KvReuseClient.JSON.readTree(valid.body());
            List<SchemaValues.Field> fields = SchemaValues.fields(op.body()).stream()
                    .filter(f -> !f.at().isEmpty())
                    .toList();
            kinds.add(Combinators.combine(Arbitraries.of(fields), boundaryValues())
                    .as((f, v) -> new Fuzz(
                            valid.json(SchemaValues.with(body, f.at(), v).toString())
                                    .because("boundary " + f + "=" + abbreviate(v)),
                            Fuzz.NOT_5XX)));
        }
        List<OpenApiDocument.Param> params =
                op.params().stream().filter(p -> !p.name().equals("waitMs")).toList();
        if (!params.isEmpty()) {
            // parameters stay within the HTTP server's line and header limits (4 KB / 8 KB), past
            // which Netty answers 414/431 itself, before any application code
            kinds.add(Combinators.combine(
                            Arbitraries.of(params),
                            boundaryValues().filter(v -> String.valueOf(v).length() < 1000))
                    .as((p, v) -> {
                        String text = v.isString() ? v.asString() : v.toString();
                        RawHttp.Request r = p.in().equals("path")
                                ? new RawHttp.Request(
                                        valid.method(),
                                        values.path(op, Map.of(p.name(), text)),
                                        valid.headers(),
                                        valid.body(),
                                        "boundary path " + p.name() + "=" + abbreviate(v))
                                : param(op, valid, p, text);
                        return new Fuzz(r, Fuzz.NOT_5XX);
                    }));
        }
        if (kinds.isEmpty()) {
            return Arbitraries.just(new Fuzz(valid.because("as documented"), Fuzz.NOT_5XX));
        }
        return Arbitraries.oneOf(kinds);
    }

    private static Caller allowed(OpenApiDocument.Operation op) {
        for (Caller c : List.of(Caller.ENGINE, Caller.AGENT, Caller.ROUTER, Caller.OPERATOR)) {
            if (AccessPolicy.expected(op.key(), c) == AccessPolicy.Expected.ALLOWED) {
                return c;
            }
        }
        return null;
    }

    private static Arbitrary<JsonNode> boundaryValues() {
        List<JsonNode> fixed = List.of(
                F.numberNode(0),
                F.numberNode(-1),
                F.numberNode(1),
                F.numberNode(Integer.MAX_VALUE),
                F.numberNode(Integer.MIN_VALUE),
                F.numberNode(2_147_483_648L),
                F.numberNode(Long.MAX_VALUE),
                F.numberNode(Long.MIN_VALUE),
                F.numberNode(TWO_63),
                F.numberNode(TWO_64),
                F.numberNode(TWO_64.subtract(BigInteger.ONE)),
                F.numberNode(new java.math.BigDecimal("-0.0")),
                F.numberNode(new java.math.BigDecimal("1.0000000000000002")),
                F.stringNode("0"),
                F.stringNode("18446744073709551615"),
                F.stringNode("18446744073709551616"),
                F.stringNode("0xFFFFFFFFFFFFFFFF"),
                F.stringNode("0x0"),
                F.stringNode("0X1f"),
                F.stringNode("0x10"),
                F.stringNode("\u0661\u0662"),
                F.stringNode("-9223372036854775808"),
                F.stringNode("9223372036854775808"),
                F.stringNode(""),
                F.stringNode(" "),
                F.stringNode("\u0000"),
                F.stringNode("\ud83d\ude00"),
                F.stringNode("\ud800"),
                F.stringNode("null"),
                F.stringNode("x".repeat(10_000)),
                F.booleanNode(false),
                F.nullNode(),
                F.arrayNode(),
                F.objectNode());
        return Arbitraries.oneOf(
                Arbitraries.of(fixed),
                Arbitraries.longs().map(l -> (JsonNode) F.numberNode(l)),
                Arbitraries.longs().map(l -> (JsonNode) F.stringNode(Long.toUnsignedString(l))),
                Arbitraries.strings().ofMaxLength(40).map(s -> (JsonNode) F.stringNode(s)));
    }

    private static String abbreviate(JsonNode v) {
        String s = String.valueOf(v);
        return s.length() > 60 ? s.substring(0, 60) + "…[" + s.length() + "]" : s;
    }
}
