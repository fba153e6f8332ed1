package io.kvreuse.sim.demo;

import io.kvreuse.sim.SimHttp;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/** What the demo does as an operator, through the REST API with the operator token. */
final class Operator {

    private final String baseUrl;
    private final SimHttp http;

    Operator(String baseUrl, String token) {
        this.baseUrl = baseUrl;
        this.http = new SimHttp(baseUrl, token, new AtomicLong());
    }

    SimHttp http() {
        return http;
    }

    /** A client holding a newly minted token of {@code role}. */
    SimHttp client(String role, String subject) {
        String token = http.post("/api/v1/tokens", Map.of("role", role, "subject", subject, "description", "demo"))
                .expect(201, "mint a " + role + " token")
                .body()
                .path("token")
                .asString();
        return new SimHttp(baseUrl, token, new AtomicLong());
    }

    /** A bare AGENT token bound to {@code hostId} (the agent process reads it from its environment). */
    String agentToken(String subject, String hostId) {
        return http.post(
                        "/api/v1/tokens",
                        Map.of("role", "AGENT", "subject", subject, "hostId", hostId, "description", "demo"))
                .expect(201, "mint an AGENT token")
                .body()
                .path("token")
                .asString();
    }

    /** Certifies the layout contract; the same contract always gets the same id. */
    String certify(Map<String, Object> contract) {
        var r = http.post("/api/v1/domains", contract);
        if (r.status() != 201 && r.status() != 200) {
            r.expect(201, "certify the layout domain");
        }
        return r.body().path("domainId").asString();
    }

    /** Turns reuse on or off, leaving the other settings as they are; returns the stored document. */
    JsonNode reuse(boolean enabled, String reason) {
        JsonNode current = http.get("/api/v1/settings/reuse", Duration.ofSeconds(30))
                .expect(200, "read the reuse settings")
                .body();
        Map<String, Object> doc = new LinkedHashMap<>();
        current.properties().forEach(e -> doc.put(e.getKey(), e.getValue()));
        doc.put("enabled", enabled);
        return http.put("/api/v1/settings/reuse", doc)
                .expect(200, "change the reuse settings (" + reason + ")")
                .body();
    }

    JsonNode incarnation(String id) {
        return http.get("/api/v1/incarnations/" + id, Duration.ofSeconds(30))
                .expect(200, "read incarnation " + id)
                .body();
    }

    JsonNode lease(UUID id) {
        return http.get("/api/v1/leases/" + id, Duration.ofSeconds(30))
                .expect(200, "read lease " + id)
                .body();
    }

    JsonNode cleanupCandidates() {
        return http.get("/api/v1/cleanup/candidates", Duration.ofSeconds(30))
                .expect(200, "list cleanup candidates")
                .body();
    }

    JsonNode cleanupPlan(String incarnationId) {
        return http.post("/api/v1/cleanup/plans", Map.of("incarnationId", incarnationId))
                .expect(201, "plan the cleanup of " + incarnationId)
                .body();
    }

    JsonNode executePlan(String planId, String reason, boolean quiescenceAttested) {
        return http.post(
                        "/api/v1/cleanup/plans/" + planId + "/execute",
                        Map.of("reason", reason, "quiescenceAttested", quiescenceAttested))
                .expect(200, "execute cleanup plan " + planId)
                .body();
    }

    /** The sum of every series of a meter in the control plane's Prometheus scrape; -1 when absent. */
    double metric(String name) {
        return Prometheus.value(http.getText("/actuator/prometheus", Duration.ofSeconds(30)), name);
    }
}
