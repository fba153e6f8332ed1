package io.kvreuse.transfer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * How the engine reaches NIXL. Mapped from the application's configuration; no defaults are read
 * from the environment.
 *
 * @param library path of {@code libnixl_capi.so} (or the emulator)
 * @param backend the NIXL backend plugin every agent creates, e.g. {@code UCX}
 * @param backendParams backend init parameters, e.g. {@code num_threads=4}
 * @param captureTelemetry whether agents capture per-transfer telemetry inside NIXL
 * @param progressInterval pause between status polls of in-flight transfers on the agent thread
 */
public record TransferOptions(
        Path library,
        String backend,
        Map<String, String> backendParams,
        boolean captureTelemetry,
        Duration progressInterval) {

    public TransferOptions {
        backendParams = Map.copyOf(backendParams);
        if (backend.isBlank()) {
            throw new IllegalArgumentException("backend must name a NIXL plugin, e.g. UCX");
        }
        if (progressInterval.isNegative() || progressInterval.isZero()) {
            throw new IllegalArgumentException("progressInterval must be positive");
        }
    }

    /** UCX with no parameters, telemetry on, polling in-flight transfers every 20 µs. */
    public static TransferOptions of(Path library) {
        return new TransferOptions(library, "UCX", Map.of(), true, Duration.ofNanos(20_000));
    }

    public TransferOptions withBackendParams(Map<String, String> params) {
        return new TransferOptions(library, backend, params, captureTelemetry, progressInterval);
    }

    public TransferOptions withCaptureTelemetry(boolean capture) {
        return new TransferOptions(library, backend, backendParams, capture, progressInterval);
    }
}
