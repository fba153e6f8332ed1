package io.kvreuse.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AnswerTests {

    @Test
    void problemAnswerReadsTypeTitleStatusAndExtensions() {
        Answer a = new Answer(
                "POST /api/v1/leases/x/commit",
                409,
                "application/problem+json",
                "{\"type\":\"https://kvreuse.io/problems/incarnation-fenced\",\"title\":\"Incarnation fenced\","
                        + "\"status\":409,\"detail\":\"epoch 3 is stale\",\"expectedEpoch\":4}");

        assertThat(a.isProblem()).isTrue();
        Problem p = a.problem();
        assertThat(p.slug()).isEqualTo("incarnation-fenced");
        assertThat(p.title()).isEqualTo("Incarnation fenced");
        assertThat(p.status()).isEqualTo(409);
        assertThat(p.detail()).isEqualTo("epoch 3 is stale");
        assertThat(p.document().get("expectedEpoch").asInt()).isEqualTo(4);
    }

    @Test
    void expectThrowsWithTheCallAndWhatCameBack() {
        Answer a = new Answer("GET /api/v1/leases/y", 404, "application/problem+json", "{\"status\":404}");

        assertThatThrownBy(() -> a.expect(200))
                .isInstanceOf(ApiCallException.class)
                .hasMessageContaining("GET /api/v1/leases/y -> 404")
                .hasMessageContaining("expected 200")
                .satisfies(e -> assertThat(((ApiCallException) e).status()).isEqualTo(a.status()));
        assertThat(a.expect(404)).isSameAs(a);
    }

    @Test
    void aJsonAnswerIsNoProblemAndAnEmptyBodyReadsAsAnEmptyObject() {
        Answer ok = new Answer("POST /x", 200, "application/json", "");

        assertThat(ok.isProblem()).isFalse();
        assertThat(ok.json().isObject()).isTrue();
        assertThat(ok.json().size()).isZero();
        assertThatThrownBy(ok::problem).isInstanceOf(ApiCallException.class);
    }
}
