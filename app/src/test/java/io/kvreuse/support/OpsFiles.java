package io.kvreuse.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What kvreuse ships for operators under {@code ops/}: the Prometheus alert rules and the Grafana
 * dashboard, with their PromQL expressions and the metric names those expressions select.
 */
public final class OpsFiles {

    /** The repository root, seen from a module's directory (where Maven runs its tests). */
    public static Path root() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("ops")) && Files.isRegularFile(p.resolve("mvnw"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root with ops/ above " + here);
    }

    public static Path rules() {
        return root().resolve("ops/prometheus/kvreuse-alerts.yml");
    }

    public static Path dashboard() {
        return root().resolve("ops/grafana/kvreuse-dashboard.json");
    }

    /** Alert name to expression, in file order. */
    @SuppressWarnings("unchecked")
    public static Map<String, String> ruleExpressions() {
        Map<String, Object> doc = new Yaml().load(read(rules()));
        Map<String, String> out = new LinkedHashMap<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) doc.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                Object name = rule.containsKey("alert") ? rule.get("alert") : rule.get("record");
                out.put(String.valueOf(name), String.valueOf(rule.get("expr")).strip());
            }
        }
        return out;
    }

    /** Panel title (and target ref) to expression, with Grafana's interval variables as Prometheus would get them. */
    public static Map<String, String> dashboardExpressions() {
        JsonNode dash = JsonMapper.builder().build().readTree(read(dashboard()));
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode panel : dash.get("panels")) {
            JsonNode targets = panel.get("targets");
            if (targets == null) {
                continue;
            }
            for (JsonNode t : targets) {
                out.put(
                        panel.get("title").asString() + " / " + t.get("refId").asString(),
                        t.get("expr")
                                .asString()
                                .replace("$__rate_interval", "5m")
                                .replace("$__interval", "1m")
                                .replace("$__range", "1h"));
            }
        }
        return out;
    }

    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"");
    private static final Pattern BRACES = Pattern.compile("\\{[^}]*}");
    private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
    private static final Pattern GROUPING =
            Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern WORD = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*(?=\\s*(\\()?)");
    private static final Set<String> KEYWORDS = Set.of(
            "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool");

    /** The metric names an expression selects (function names, keywords, label names and durations left out). */
    public static Set<String> metricNames(String expr) {
        String s = STRING.matcher(expr).replaceAll("\"\"");
        s = BRACES.matcher(s).replaceAll(" ");
        s = RANGE.matcher(s).replaceAll(" ");
        s = GROUPING.matcher(s).replaceAll(" ");
        s = s.replaceAll("\\boffset\\s+\\w+", " ");
        Set<String> names = new TreeSet<>();
        Matcher m = WORD.matcher(s);
        while (m.find()) {
            int start = m.start();
            if (start > 0 && (Character.isDigit(s.charAt(start - 1)) || s.charAt(start - 1) == '.')) {
                continue; // the unit of a number or duration, e.g. 1e3
            }
            String word = m.group();
            boolean call = m.group(1) != null;
            if (!call && !KEYWORDS.contains(word)) {
                names.add(word);
            }
        }
        return names;
    }

    /** Every expression of the rules and the dashboard, keyed by where it comes from. */
    public static Map<String, String> allExpressions() {
        Map<String, String> all = new LinkedHashMap<>();
        ruleExpressions().forEach((k, v) -> all.put("rule " + k, v));
        dashboardExpressions().forEach((k, v) -> all.put("panel " + k, v));
        return all;
    }

    /** Metric names used anywhere, each with where it is used. */
    public static Map<String, List<String>> usedMetrics() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        allExpressions().forEach((where, expr) -> {
            for (String name : metricNames(expr)) {
                out.computeIfAbsent(name, n -> new ArrayList<>()).add(where);
            }
        });
        return out;
    }

    public static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private OpsFiles() {}
}
