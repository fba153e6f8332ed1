package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.incarnation.LivenessSweeper;
import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.MutableClock;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;

/** The cleanup pages enforce the service's rules: once only, never stale, never without a reason or CSRF. */
@IntegrationTest
class AdminCleanupPagesIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    MutableClock clock;

    @Autowired
    LivenessSweeper sweeper;

    Fleet fleet;
    AdminSession admin;
    String lost;

    @BeforeEach
    void lostIncarnation() {
        fleet = new Fleet(http, tokens);
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        Fleet.Engine engine = fleet.ready("DECODE", domain, 1, Fleet.host());
        lost = engine.id();
        clock.advance(Duration.ofSeconds(61));
        for (int i = 0; i < 40 && !"LOST".equals(state(lost)); i++) {
            sweeper.sweepOnce().block();
            io.kvreuse.support.LeaseWorld.sleep(25);
        }
        assertThat(state(lost)).isEqualTo("LOST");
        admin = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
    }

    @Test
    void aPlanExecutesOnceAndAnOlderPlanIsThenStale() {
        String first = plan(lost);
        String second = plan(lost);
        assertThat(admin.html("/admin/cleanup/plans/" + second, HttpStatus.OK))
                .contains("PLANNED")
                .contains(lost);

        EntityExchangeResult<byte[]> done = execute(second, "pod deleted by the scheduler");
        assertThat(done.getStatus().is3xxRedirection()).isTrue();
        assertThat(admin.html("/admin/cleanup/plans/" + second, HttpStatus.OK))
                .contains("RECLAIMED")
                .contains("EXECUTED");

        EntityExchangeResult<byte[]> again = execute(second, "twice");
        assertThat(again.getStatus().value()).isEqualTo(409);
        assertThat(AdminSession.body(again)).contains("execute-error");
        EntityExchangeResult<byte[]> stale = execute(first, "stale");
        assertThat(stale.getStatus().value()).isEqualTo(409);
        assertThat(state(lost)).isEqualTo("RECLAIMED");
    }

    @Test
    void aReasonIsRequiredAndChangesNothing() {
        String plan = plan(lost);
        EntityExchangeResult<byte[]> refused = execute(plan, "   ");
        assertThat(refused.getStatus().value()).isEqualTo(400);
        assertThat(AdminSession.body(refused)).contains("A reason");
        assertThat(state(lost)).isEqualTo("LOST");
    }

    @Test
    void aHealthyIncarnationIsNotACandidate() {
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        Fleet.Engine healthy = fleet.ready("DECODE", domain, 1, Fleet.host());
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("incarnationId", healthy.id());
        EntityExchangeResult<byte[]> refused = admin.submit("/admin/cleanup", "/admin/cleanup/plans", form);
        assertThat(refused.getStatus().value()).isEqualTo(422);
        assertThat(AdminSession.body(refused)).contains("plan-error");
    }

    @Test
    void formsWithoutCsrfAreRefusedAndOtherRolesNeverReachCleanup() {
        String plan = plan(lost);
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("reason", "no csrf");
        EntityExchangeResult<byte[]> refused = admin.post("/admin/cleanup/plans/" + plan + "/execute", form);
        assertThat(refused.getStatus().value()).isEqualTo(403);
        assertThat(state(lost)).isEqualTo("LOST");
        for (Role role : List.of(Role.ENGINE, Role.ROUTER)) {
            http.get()
                    .uri("/admin/cleanup")
                    .header("Authorization", "Bearer " + tokens.mint(role))
                    .exchange()
                    .expectStatus()
                    .value(s -> assertThat(s).isIn(302, 303, 401, 403));
            http.post()
                    .uri("/api/v1/cleanup/plans")
                    .header("Authorization", "Bearer " + tokens.mint(role))
                    .bodyValue(Map.of("incarnationId", lost))
                    .exchange()
                    .expectStatus()
                    .isForbidden();
        }
    }

    private String plan(String incarnationId) {
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("incarnationId", incarnationId);
        EntityExchangeResult<byte[]> r = admin.submit("/admin/cleanup", "/admin/cleanup/plans", form);
        assertThat(r.getStatus().is3xxRedirection()).as(AdminSession.body(r)).isTrue();
        String location = r.getResponseHeaders().getLocation().toString();
        return location.substring(location.lastIndexOf('/') + 1);
    }

    private EntityExchangeResult<byte[]> execute(String planId, String reason) {
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("reason", reason);
        return admin.submit("/admin/cleanup/plans/" + planId, "/admin/cleanup/plans/" + planId + "/execute", form);
    }

    private String state(String incarnationId) {
        return (String) fleet.get("/api/v1/incarnations/" + incarnationId, tokens.operator())
                .get("state");
    }
}
