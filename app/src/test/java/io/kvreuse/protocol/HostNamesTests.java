package io.kvreuse.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which host names an endpoint may name: those a resolver can look up (RFC 1123). */
class HostNamesTests {

    @Test
    void namesAResolverCanLookUpAreTaken() {
        assertThat(HostNames.isDnsName("engine-a")).isTrue();
        assertThat(HostNames.isDnsName("127.0.0.1")).isTrue();
        assertThat(HostNames.isDnsName("gpu-node-17.rack3.example.com")).isTrue();
        assertThat(HostNames.isDnsName("0gpu"))
                .as("a label may start with a digit")
                .isTrue();
        assertThat(HostNames.isDnsName("k".repeat(63) + ".example"))
                .as("a label of 63")
                .isTrue();
        assertThat(HostNames.isDnsName("a.".repeat(126) + "a"))
                .as("253 characters")
                .isTrue();
    }

    @Test
    void namesNoResolverCanLookUpAreRefused() {
        assertThat(HostNames.isDnsName("")).isFalse();
        assertThat(HostNames.isDnsName("a..b")).as("an empty label").isFalse();
        assertThat(HostNames.isDnsName("engine.")).as("a trailing dot").isFalse();
        assertThat(HostNames.isDnsName("engine-"))
                .as("a label ending with a hyphen")
                .isFalse();
        assertThat(HostNames.isDnsName("x.-y"))
                .as("a label starting with a hyphen")
                .isFalse();
        assertThat(HostNames.isDnsName("gpu_node")).as("an underscore").isFalse();
        assertThat(HostNames.isDnsName("k".repeat(64) + ".example"))
                .as("a label of 64")
                .isFalse();
        assertThat(HostNames.isDnsName("a.".repeat(127) + "ab"))
                .as("256 characters")
                .isFalse();
    }
}
