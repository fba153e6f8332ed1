package io.kvreuse.agent;

import io.kvreuse.protocol.KvReuseHome;
import io.kvreuse.transfer.NativeAvailability;
import io.kvreuse.transfer.TransferEngine;
import io.kvreuse.transfer.TransferOptions;
import io.kvreuse.transfer.cuda.CudaIpc;
import io.kvreuse.transfer.emulator.EmulatorControl;
import io.kvreuse.transfer.emulator.NixlEmulator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntConsumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The agent role's beans. Only scanned when {@code kvreuse.role=agent} (see {@code RoleScanFilter}).
 * NIXL is loaded and every GPU's agent created here, at boot: a missing library, a missing symbol
 * or native access not enabled stops the process with the reason and its fix, never a request.
 */
@Configuration(proxyBeanMethods = false)
class AgentConfiguration {

    private static final Log log = LogFactory.getLog(AgentConfiguration.class);

    @Bean
    GpuAgents gpuAgents(AgentProperties props, MeterRegistry registry) {
        Path library = props.nixlLibrary() == null ? NixlEmulator.library() : props.nixlLibrary();
        // loopback copies between imported regions: UCX's error mode none, so GPU copies get cuda_copy
        TransferOptions options = TransferOptions.forNodeAgent(library);
        if (!props.backend().equals(options.backend())) {
            options = new TransferOptions(
                    library,
                    props.backend(),
                    options.backendParams(),
                    options.captureTelemetry(),
                    options.progressInterval(),
                    options.progressThread(),
                    options.spinWindow(),
                    options.idleSpin());
        }
        NativeAvailability availability = NativeAvailability.check(options);
        if (!availability.available()) {
            throw new IllegalStateException("NIXL is unavailable at " + library + ": " + availability.reason());
        }
        if (props.nixlLibrary() == null) {
            emulator(props, registry);
        } else if (props.emulator().stallTransfers()) {
            log.warn("kvreuse.agent.emulator.* is ignored: the agent runs on " + library + ", not the emulator");
        }
        IntConsumer onAgentThread = props.nixlLibrary() == null ? ordinal -> {} : deviceSetup();
        return new GpuAgents(TransferEngine.open(options), props.hostId(), props.gpus(), onAgentThread);
    }

    /** {@code cudaSetDevice} on each agent's own thread when this host has a CUDA runtime. */
    private static IntConsumer deviceSetup() {
        Path runtime = CudaIpcImporter.defaultRuntime();
        if (runtime == null || CudaIpc.unavailableReason(runtime) != null) {
            return ordinal -> {};
        }
        CudaIpc cuda = CudaIpc.open(runtime);
        return cuda::setDevice;
    }

    private static void emulator(AgentProperties props, MeterRegistry registry) {
        log.warn("no kvreuse.agent.nixl-library: moving bytes with the host-memory NIXL emulator ("
                + NixlEmulator.library() + "); engines' regions must be shm:// regions");
        EmulatorControl control = NixlEmulator.control();
        if (props.emulator().stallTransfers()) {
            log.warn("FAULT INJECTION: the emulator stalls every transfer (kvreuse.agent.emulator.stall-transfers)");
            control.stallTransfers();
        }
        io.micrometer.core.instrument.FunctionCounter.builder(
                        "kvreuse.agent.emulator.copied", control, EmulatorControl::bytesCopied)
                .description("bytes the NIXL emulator copied between registered regions")
                .baseUnit("bytes")
                .register(registry);
    }

    @Bean
    RegionImports regionImports(GpuAgents gpus) {
        List<RegionImporter> importers = List.of(new SharedMemoryImporter(), new CudaIpcImporter(gpus));
        for (RegionImporter importer : importers) {
            if (!importer.unavailableReason().isEmpty()) {
                log.info(importer.scheme() + ":// regions cannot be imported here: " + importer.unavailableReason());
            }
        }
        return new RegionImports(importers);
    }

    @Bean
    AgentMetrics agentMetrics(MeterRegistry registry) {
        return new AgentMetrics(registry);
    }

    @Bean
    ControlPlaneClient controlPlaneClient(
            AgentProperties props, MeterRegistry registry, ObjectProvider<ObservationRegistry> observations) {
        // observed, so http.client.requests shows the agent's calls to the control plane
        WebClient.Builder builder =
                WebClient.builder().observationRegistry(observations.getIfAvailable(() -> ObservationRegistry.NOOP));
        ControlPlaneClient client = new ControlPlaneClient(builder, props);
        io.micrometer.core.instrument.FunctionCounter.builder(
                        "kvreuse.agent.control.sent", client, ControlPlaneClient::bytesSent)
                .description("request body bytes the agent sent to the control plane")
                .baseUnit("bytes")
                .register(registry);
        return client;
    }

    @Bean
    AgentSession agentSession(ControlPlaneClient client, GpuAgents gpus, AgentProperties props) {
        return new AgentSession(client, gpus, props.retryBackoff(), props.maxRetryBackoff());
    }

    @Bean
    ReportOutbox reportOutbox(
            ControlPlaneClient client,
            AgentSession session,
            AgentProperties props,
            MeterRegistry registry,
            Clock clock) {
        return new ReportOutbox(client, session, props.maxRetryBackoff(), clock).metrics(registry);
    }

    @Bean
    HostLock hostLock(AgentProperties props, Environment env) {
        Path file = props.lockFile() != null
                ? props.lockFile()
                : KvReuseHome.resolve(env).resolve("agent-" + props.hostId() + ".lock");
        return HostLock.acquire(file);
    }

    @Bean
    AgentRuntime agentRuntime(
            AgentProperties props,
            HostLock hostLock,
            AgentSession session,
            ControlPlaneClient client,
            ReportOutbox outbox,
            GpuAgents gpus,
            RegionImports regions,
            AgentMetrics metrics,
            Clock clock) {
        ExecutorService workers = Executors.newFixedThreadPool(
                props.workers(),
                Thread.ofPlatform().name("kvreuse-agent-part-", 0).factory());
        PartExecutor executor =
                new PartExecutor(gpus, regions, outbox, metrics, props.hostId(), props.transferTimeout());
        OrderRunner runner = new OrderRunner(executor, workers);
        EarlierProcessParts earlier = new EarlierProcessParts(
                client, outbox, runner, hostLock, props.hostId(), props.retryBackoff(), props.maxRetryBackoff());
        // a poll answer arrives within the client's poll timeout (the wait plus 15 s) or never
        LostOrders lost = new LostOrders(
                client, outbox, runner, props.hostId(), props.pollWait().plusSeconds(15), clock);
        return new AgentRuntime(props, session, client, runner, earlier, lost, outbox, workers, gpus, regions, clock);
    }

    /** Subscribes to the engines' own KV event streams named by this host's banks. */
    @Bean(destroyMethod = "close")
    io.kvreuse.agent.kvevents.KvEventBridge kvEventBridge(AgentProperties props, MeterRegistry registry) {
        var bridge = new io.kvreuse.agent.kvevents.KvEventBridge(
                new io.kvreuse.agent.kvevents.HttpInventoryFeed(props.controlPlane(), props.token(), props.hostId()),
                registry,
                props.kvEvents().refreshInterval(),
                props.retryBackoff());
        return props.kvEvents().enabled() ? bridge.start() : bridge;
    }

    @Bean
    NixlHealthIndicator nixlHealthIndicator(
            GpuAgents gpus, AgentSession session, AgentRuntime runtime, AgentProperties props) {
        String library =
                props.nixlLibrary() == null ? "emulator" : props.nixlLibrary().toString();
        return new NixlHealthIndicator(gpus, session, runtime, library);
    }
}
