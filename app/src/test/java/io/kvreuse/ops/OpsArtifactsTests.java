package io.kvreuse.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Exposition;
import io.kvreuse.support.OpsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The alert rules and the dashboard under {@code ops/}: parsed by Prometheus' own promtool, the
 * rules' behaviour checked by promtool's rule unit tests, and the dashboard's panels complete.
 * That every metric they name is served is checked against running processes
 * (MetricsCatalogIntegrationTests, AgentMetricsCatalogTests).
 */
class OpsArtifactsTests {

    @TempDir
    Path tmp;

    @Test
    void alertRulesParseWithPromtool() {
        Tool promtool = Tool.require("promtool", "prometheus");
        Tool.Result r = promtool.run(
                OpsFiles.root(), Map.of(), "check", "rules", OpsFiles.rules().toString());
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + OpsFiles.ruleExpressions().size() + " rules found");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertHasASeverityASummaryAndADescription() {
        Map<String, Object> doc = new org.yaml.snakeyaml.Yaml().load(OpsFiles.read(OpsFiles.rules()));
        List<String> problems = new ArrayList<>();
        int alerts = 0;
        for (Map<String, Object> group : (List<Map<String, Object>>) doc.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                String name = String.valueOf(rule.get("alert"));
                alerts++;
                Map<String, Object> labels = (Map<String, Object>) rule.getOrDefault("labels", Map.of());
                Map<String, Object> notes = (Map<String, Object>) rule.getOrDefault("annotations", Map.of());
                if (!List.of("critical", "warning", "info").contains(String.valueOf(labels.get("severity")))) {
                    problems.add(name + ": severity " + labels.get("severity"));
                }
                for (String key : List.of("summary", "description")) {
                    if (notes.get(key) == null || String.valueOf(notes.get(key)).isBlank()) {
                        problems.add(name + ": no " + key);
                    }
                }
                if (!name.startsWith("Kvreuse")) {
                    problems.add(name + ": not named Kvreuse…");
                }
            }
        }
        assertThat(alerts).isEqualTo(OpsFiles.ruleExpressions().size()).isGreaterThan(20);
        assertThat(problems).isEmpty();
    }

    @Test
    void alertRulesFireWhenTheirUnitTestsSayAndStayQuietOtherwise() {
        Tool promtool = Tool.require("promtool", "prometheus");
        Path tests = OpsFiles.root().resolve("ops/prometheus/kvreuse-alerts.test.yml");
        Tool.Result r = promtool.run(
                tests.getParent(),
                Map.of(),
                "test",
                "rules",
                tests.getFileName().toString());
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS");
    }

    @Test
    void everyDashboardQueryParsesWithPromtool() throws Exception {
        Tool promtool = Tool.require("promtool", "prometheus");
        Map<String, String> queries = OpsFiles.dashboardExpressions();
        assertThat(queries).hasSizeGreaterThan(20);
        // promtool parses expressions in rule files: each panel query becomes a recording rule
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int i = 0;
        for (String expr : queries.values()) {
            rules.append("      - record: dashboard:query_").append(i++).append('\n');
            rules.append("        expr: '").append(expr.replace("'", "''")).append("'\n");
        }
        Path file = Files.writeString(tmp.resolve("dashboard-queries.yml"), rules);
        Tool.Result r = promtool.run(tmp, Map.of(), "check", "rules", file.toString());
        assertThat(r.exit()).as(r.output() + "\n" + rules).isZero();
        assertThat(r.output()).contains("SUCCESS: " + queries.size() + " rules found");
    }

    @Test
    void promtoolRefusesAnExpressionThatDoesNotParse() throws Exception {
        Tool promtool = Tool.require("promtool", "prometheus");
        Path file = Files.writeString(tmp.resolve("broken.yml"), """
                groups:
                  - name: broken
                    rules:
                      - alert: Broken
                        expr: sum(rate(kvreuse_selection_decisions_total[5m]) >
                """);
        Tool.Result r = promtool.run(tmp, Map.of(), "check", "rules", file.toString());
        assertThat(r.exit()).isNotZero();
        assertThat(r.output()).doesNotContain("SUCCESS");
    }

    @Test
    void dashboardPanelsHaveUnitsAxisLabelsAndTheImportedDataSource() {
        JsonNode dash = JsonMapper.builder().build().readTree(OpsFiles.read(OpsFiles.dashboard()));
        assertThat(dash.get("uid").asString()).isEqualTo("kvreuse-overview");
        assertThat(dash.get("templating").get("list").get(0).get("type").asString())
                .isEqualTo("datasource");
        List<String> problems = new ArrayList<>();
        int charts = 0;
        for (JsonNode p : dash.get("panels")) {
            String title = p.get("title").asString();
            if ("row".equals(p.get("type").asString())) {
                continue;
            }
            if (!"${datasource}".equals(p.get("datasource").get("uid").asString())) {
                problems.add(title + ": not on the dashboard's data source variable");
            }
            JsonNode defaults = p.get("fieldConfig").get("defaults");
            if (defaults.get("unit") == null || defaults.get("unit").asString().isBlank()) {
                problems.add(title + ": no unit");
            }
            if ("timeseries".equals(p.get("type").asString())) {
                charts++;
                JsonNode axis = defaults.get("custom") == null
                        ? null
                        : defaults.get("custom").get("axisLabel");
                if (axis == null || axis.asString().isBlank()) {
                    problems.add(title + ": no axis label");
                }
            }
            for (JsonNode t : p.get("targets")) {
                if (!"${datasource}".equals(t.get("datasource").get("uid").asString())) {
                    problems.add(title + " / " + t.get("refId").asString() + ": not on the data source variable");
                }
            }
        }
        assertThat(charts).isGreaterThan(15);
        assertThat(problems).isEmpty();
    }

    @Test
    void metricNamesAreTakenFromSelectorsNotFromFunctionsLabelsOrDurations() {
        assertThat(OpsFiles.metricNames("""
                        histogram_quantile(0.99, sum by (le) (rate(kvreuse_a_seconds_bucket{reason="X", to=~"A|B"}[5m])))
                          / on(instance) group_left kvreuse_b offset 1w > 0.5 * max(r2dbc_pool_pending_connections) and 1e3
                        """))
                .containsExactlyInAnyOrder("kvreuse_a_seconds_bucket", "kvreuse_b", "r2dbc_pool_pending_connections");
    }

    @Test
    void namingRulesCatchWhatTheyAreAbout() {
        Exposition bad = Exposition.parse("""
                # HELP kvreuse_gain_milliseconds gain
                # TYPE kvreuse_gain_milliseconds histogram
                kvreuse_gain_milliseconds_count 1
                # HELP kvreuse_copied_bytes_total
                # TYPE kvreuse_copied_bytes_total counter
                kvreuse_copied_bytes_total 1
                # HELP kvreuse_sent_bytes_bytes_total sent
                # TYPE kvreuse_sent_bytes_bytes_total counter
                kvreuse_sent_bytes_bytes_total 1
                # HELP kvreuse_decisions_total decisions
                # TYPE kvreuse_decisions_total counter
                kvreuse_decisions_total{decision="HINT",reason="NONE"} 1
                # HELP kvreuse_open_total open
                # TYPE kvreuse_open_total gauge
                kvreuse_open_total 1
                # HELP kvreuse_bytes_moved moved
                # TYPE kvreuse_bytes_moved counter
                kvreuse_bytes_moved 1
                # HELP kvreuse_latency latency
                # TYPE kvreuse_latency summary
                kvreuse_latency_count 1
                """);
        assertThat(bad.violations("kvreuse_"))
                .anyMatch(v -> v.startsWith("kvreuse_gain_milliseconds: unit milliseconds"))
                .anyMatch(v -> v.equals("kvreuse_copied_bytes_total: no help text"))
                .anyMatch(v -> v.startsWith("kvreuse_sent_bytes_bytes_total: unit bytes appears 2 times"))
                .anyMatch(v -> v.contains("label reason has the placeholder value \"NONE\""))
                .anyMatch(v -> v.startsWith("kvreuse_open_total: only counters end with _total"))
                .anyMatch(v -> v.startsWith("kvreuse_bytes_moved: a counter's name ends with _total"))
                .anyMatch(v -> v.startsWith("kvreuse_bytes_moved: unit bytes is not the suffix"))
                .anyMatch(v -> v.startsWith("kvreuse_latency: a summary names its unit"));
        Exposition good = Exposition.parse("""
                # HELP kvreuse_selection_latency_seconds donor selection, request to answer
                # TYPE kvreuse_selection_latency_seconds histogram
                kvreuse_selection_latency_seconds_bucket{le="0.001"} 1
                # HELP kvreuse_selection_latency_seconds_max donor selection, request to answer
                # TYPE kvreuse_selection_latency_seconds_max gauge
                kvreuse_selection_latency_seconds_max 0.001
                # HELP kvreuse_selection_decisions_total answers
                # TYPE kvreuse_selection_decisions_total counter
                kvreuse_selection_decisions_total{decision="HINT"} 1
                """);
        assertThat(good.violations("kvreuse_")).isEmpty();
    }
}
