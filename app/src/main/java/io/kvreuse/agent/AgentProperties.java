package io.kvreuse.agent;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The node agent ({@code kvreuse.role=agent}).
 *
 * @param controlPlane base URL of the control plane, e.g. {@code http://kvreuse:8080}
 * @param token the host's AGENT token; only from the environment ({@code KVREUSE_AGENT_TOKEN})
 * @param hostId this host as engines name it in their registrations
 * @param gpus the GPUs whose engines this agent serves (one NIXL agent each)
 * @param nixlLibrary {@code libnixl_capi.so}; unset: the bundled host-memory emulator
 * @param backend NIXL backend every agent creates
 * @param pollWait how long one order long poll may wait on the control plane
 * @param heartbeatInterval time between heartbeats
 * @param transferTimeout a part not complete by then is reported UNCERTAIN and cancelled
 * @param retryBackoff first pause before retrying the control plane; doubles up to {@code maxRetryBackoff}
 * @param maxRetryBackoff longest pause between retries
 * @param workers threads that run parts (native calls and waits; never Netty threads)
 * @param emulator fault injection of the emulator, for tests and demos; ignored on a real NIXL
 * @param lockFile the file whose lock makes this the host's only agent process; unset: {@code
 *     agent-<hostId>.lock} in the data directory ({@code KVREUSE_HOME})
 * @param kvEvents the bridge from the engines' own KV event streams (docs/kv-events.md)
 */
@Validated
@ConfigurationProperties("kvreuse.agent")
record AgentProperties(
        @NotNull URI controlPlane,
        @NotBlank String token,
        @NotBlank @Pattern(regexp = "[A-Za-z0-9._:@-]+") String hostId,
        @NotEmpty List<@NotNull @Valid Gpu> gpus,
        @Nullable Path nixlLibrary,
        @DefaultValue("UCX") String backend,
        @DefaultValue("20s") Duration pollWait,
        @DefaultValue("5s") Duration heartbeatInterval,
        @DefaultValue("10s") Duration transferTimeout,
        @DefaultValue("200ms") Duration retryBackoff,
        @DefaultValue("5s") Duration maxRetryBackoff,
        @DefaultValue("8") @Min(1) @Max(256) int workers,
        @DefaultValue @Valid Emulator emulator,
        @Nullable Path lockFile,
        @DefaultValue @Valid KvEvents kvEvents) {

    /** A GPU of this host: CUDA ordinal and UUID. */
    record Gpu(@Min(0) @Max(1023) int ordinal, @NotBlank String uuid) {}

    /** @param stallTransfers posted transfers never progress (to exercise UNCERTAIN and QUIESCED) */
    record Emulator(@DefaultValue("false") boolean stallTransfers) {}

    /**
     * @param enabled subscribe to the event sources the host's banks name
     * @param refreshInterval how often the list of event sources is read again
     */
    record KvEvents(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("2s") Duration refreshInterval) {}

    @Override
    public String toString() {
        return "AgentProperties[controlPlane=" + controlPlane + ", hostId=" + hostId + ", gpus=" + gpus + "]";
    }
}
