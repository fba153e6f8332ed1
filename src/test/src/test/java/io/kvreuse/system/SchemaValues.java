package io.kvreuse.system;

import io.kvreuse.testkit.KvReuseClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Well-formed values from OpenAPI schemas: what the schema asks for, with the fleet's real ids
 * wherever a parameter or field carries the name the API gives them ({@code leaseId}, {@code
 * hostId}, …) and a few names the contract gives a meaning to (hashes are u64 strings, regions
 * are {@code shm://} references, NIXL metadata is base64).
 */
final class SchemaValues {

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** A field of a request body: where it is (object keys and array indexes), its schema, whether required. */
    record Field(List<Object> at, String name, JsonNode schema, boolean required) {

        @Override
        public String toString() {
            return at.stream()
                    .map(String::valueOf)
                    .reduce((a, b) -> a + "." + b)
                    .orElse("(root)");
        }
    }

    private final Map<String, Object> ids;

    SchemaValues(Map<String, Object> ids) {
        this.ids = ids;
    }

    /** A well-formed request of the operation with this token (null: no Authorization header). */
    RawHttp.Request request(OpenApiDocument.Operation op, String token) {
        RawHttp.Request r = RawHttp.Request.of(op.method(), path(op, Map.of()), "well-formed");
        if (token != null) {
            r = r.header("Authorization", "Bearer " + token);
        }
        if (op.body() != null) {
            r = r.json(value(op.body(), "").toString());
        }
        return r;
    }

    /** The operation's path with its parameters filled in: the overrides as given (raw), the rest from the fleet. */
    String path(OpenApiDocument.Operation op, Map<String, String> overrides) {
        String path = op.path();
        for (OpenApiDocument.Param p : op.in("path")) {
            String v = overrides.containsKey(p.name()) ? overrides.get(p.name()) : scalar(p.schema(), p.name());
            path = path.replace("{" + p.name() + "}", encode(v));
        }
        return path;
    }

    static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A well-formed value of a schema, as text (for path, query and header parameters). */
    String scalar(JsonNode schema, String name) {
        JsonNode v = value(schema, name);
        return v.isString() ? v.asString() : v.toString();
    }

    /** A well-formed JSON value of a schema for a field or parameter called {@code name}. */
    JsonNode value(JsonNode schema, String name) {
        Object known = ids.get(name);
        if (known != null) {
            return KvReuseClient.JSON.valueToTree(known);
        }
        String type = schema.path("type").asString("object");
        if (schema.has("enum")) {
            return F.stringNode(schema.get("enum").get(0).asString());
        }
        return switch (type) {
            case "integer", "number" ->
                F.numberNode(Math.max(1, schema.path("minimum").asLong(1)));
            case "boolean" -> F.booleanNode(true);
            case "array" -> {
                ArrayNode a = F.arrayNode();
                int n = Math.max(1, schema.path("minItems").asInt(1));
                for (int i = 0; i < n; i++) {
                    a.add(value(schema.get("items"), singular(name)));
                }
                yield a;
            }
            case "string" -> F.stringNode(text(schema, name));
            default -> {
                ObjectNode o = F.objectNode();
                JsonNode props = schema.get("properties");
                if (props != null) {
                    for (var p : props.properties()) {
                        o.set(p.getKey(), value(p.getValue(), p.getKey()));
                    }
                }
                yield o;
            }
        };
    }

    private static String text(JsonNode schema, String name) {
        if ("uuid".equals(schema.path("format").asString(""))) {
            return UUID.randomUUID().toString();
        }
        if (isHash(name)) {
            return "12345";
        }
        if (name.equals("regionRef")) {
            return "shm://fuzz-" + UUID.randomUUID();
        }
        if (name.endsWith("Endpoint")) {
            return "tcp://fuzz:5557";
        }
        // base64, a valid host name and stable name, and long enough for any minLength here
        return "AQID";
    }

    /** Fields named as the API names u64 hashes (strings of unsigned decimal or 0x hex). */
    static boolean isHash(String name) {
        return name.equals("seqHash") || name.equals("parentHash") || name.equals("seqHashes");
    }

    private static String singular(String name) {
        return name.equals("seqHashes") ? "seqHashes" : name + "[]";
    }

    /** Every field a body of this schema can have, present in {@link #value} or not, up to a few levels deep. */
    static List<Field> fields(JsonNode schema) {
        List<Field> out = new ArrayList<>();
        collect(schema, new ArrayList<>(), "", true, out, 0);
        return out;
    }

    private static void collect(
            JsonNode schema, List<Object> at, String name, boolean required, List<Field> out, int depth) {
        if (schema == null || depth > 6) {
            return;
        }
        out.add(new Field(List.copyOf(at), name, schema, required));
        String type = schema.path("type").asString("object");
        if (type.equals("array")) {
            List<Object> item = new ArrayList<>(at);
            item.add(0);
            collect(schema.get("items"), item, singular(name), true, out, depth + 1);
        } else if (type.equals("object") && schema.has("properties")) {
            List<String> req = new ArrayList<>();
            schema.path("required").forEach(r -> req.add(r.asString()));
            for (var p : schema.get("properties").properties()) {
                List<Object> child = new ArrayList<>(at);
                child.add(p.getKey());
                collect(p.getValue(), child, p.getKey(), req.contains(p.getKey()), out, depth + 1);
            }
        }
    }

    /**
     * The body with the value at {@code at} replaced (null: removed); missing objects and array
     * slots on the way are created, so optional fields can be given wrong values too.
     */
    static JsonNode with(JsonNode body, List<Object> at, JsonNode replacement) {
        if (at.isEmpty()) {
            return replacement;
        }
        JsonNode copy = body.deepCopy();
        JsonNode node = copy;
        for (int i = 0; i < at.size() - 1; i++) {
            Object step = at.get(i);
            Object next = at.get(i + 1);
            JsonNode child = step instanceof Integer idx ? node.get(idx) : node.get((String) step);
            if (child == null || !(child.isObject() || child.isArray())) {
                child = next instanceof Integer ? F.arrayNode().add(F.objectNode()) : F.objectNode();
                set(node, step, child);
            }
            if (next instanceof Integer idx && child.isArray() && child.size() <= idx) {
                ((ArrayNode) child).add(F.objectNode());
            }
            node = child;
        }
        Object last = at.get(at.size() - 1);
        if (replacement == null) {
            if (node instanceof ObjectNode o) {
                o.remove((String) last);
            } else if (node instanceof ArrayNode a && a.size() > (Integer) last) {
                a.remove((Integer) last);
            }
        } else {
            set(node, last, replacement);
        }
        return copy;
    }

    private static void set(JsonNode parent, Object step, JsonNode value) {
        if (parent instanceof ObjectNode o) {
            o.set((String) step, value);
        } else if (parent instanceof ArrayNode a) {
            int idx = (Integer) step;
            if (a.size() > idx) {
                a.set(idx, value);
            } else {
                a.add(value);
            }
        }
    }
}
