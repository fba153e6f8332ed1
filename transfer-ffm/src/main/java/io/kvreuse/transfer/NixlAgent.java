package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One NIXL agent with its backend, confined to its own platform thread: every method may be called
 * from any thread (Netty, virtual or platform) and hands the native work to that thread.
 *
 * <p>The proven pattern: register whole regions once, exchange {@link #localMetadata()} with peers
 * over your own side channel, prepare block sets once per region and peer, then per request submit
 * slot runs and await completion.
 */
public final class NixlAgent implements AutoCloseable {

    /** The GPU ordinal of a host-memory agent. */
    static final int NO_GPU = -1;

    private static final Duration CLOSE_GRACE = Duration.ofSeconds(5);

    /** Names of this process's open agents: a peer among them is in-process (no fast GPU lane to it). */
    private static final Set<String> IN_PROCESS = ConcurrentHashMap.newKeySet();

    private final AgentContext ctx;
    private final Transfers transfers;
    private final Notifications notifications;
    private final Consumer<NixlAgent> onClose;
    private final int gpuOrdinal;
    // agent thread only
    private final List<RegisteredRegion> regions = new ArrayList<>();
    private final Map<LocalKey, BlockSet> localBlockSets = new HashMap<>();
    private final Map<String, PeerConnection> peers = new HashMap<>();
    private @Nullable PeerConnection loopback;
    private volatile boolean open = true;

    private record LocalKey(RegisteredRegion region, long bytesPerBlock) {}

    private NixlAgent(AgentContext ctx, int gpuOrdinal, Consumer<NixlAgent> onClose) {
        this.ctx = ctx;
        this.gpuOrdinal = gpuOrdinal;
        this.transfers = new Transfers(ctx);
        this.notifications = new Notifications(ctx);
        this.onClose = onClose;
    }

    static NixlAgent create(
            NixlCapi capi,
            String name,
            TransferOptions options,
            int gpuOrdinal,
            Runnable onAgentThread,
            Consumer<NixlAgent> onClose) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("NIXL agent names must not be empty");
        }
        AgentThread thread = new AgentThread(name, options.idleSpin(), options.spinWindow());
        try {
            AgentContext ctx = thread.call("create_configured_agent", () -> {
                onAgentThread.run();
                return AgentContext.create(capi, name, thread, options);
            });
            IN_PROCESS.add(name);
            return new NixlAgent(ctx, gpuOrdinal, onClose);
        } catch (RuntimeException e) {
            thread.close();
            throw e;
        }
    }

    public String name() {
        return ctx.name;
    }

    public boolean isOpen() {
        return open;
    }

    /** The GPU this agent was created for, or empty for a host-memory agent. */
    public OptionalInt gpuOrdinal() {
        return gpuOrdinal == NO_GPU ? OptionalInt.empty() : OptionalInt.of(gpuOrdinal);
    }

    /**
     * Runs {@code task} on this agent's own thread and returns its result: for work that must happen
     * on the thread that registers and moves the memory, such as opening a CUDA IPC handle with the
     * agent's device current. Keep it short: the agent's transfers wait meanwhile.
     */
    public <T> T callOnAgentThread(String what, Callable<T> task) {
        return ctx.thread.call(what, task);
    }

    /** Registers memory by address, e.g. a CUDA allocation on device {@code devId}. */
    public RegisteredRegion register(MemoryKind kind, long address, long length, long devId) {
        return ctx.thread.call("register_mem", () -> registerHere(kind, address, length, devId, null, false));
    }

    /**
     * Registers memory another process exported and this one imported, e.g. a CUDA IPC mapping. UCX
     * cannot re-export such a region: it is fast only as this agent's local side or in its loopback,
     * so while one is registered {@link #localMetadata()} refuses to offer it to peers.
     */
    public RegisteredRegion registerImported(MemoryKind kind, long address, long length, long devId) {
        return ctx.thread.call("register_mem", () -> registerHere(kind, address, length, devId, null, true));
    }

    /** Registers a whole shared-memory region; it cannot be closed until deregistered. */
    public RegisteredRegion register(SharedMemoryRegion region, MemoryKind kind, long devId) {
        return ctx.thread.call(
                "register_mem", () -> registerHere(kind, region.address(), region.size(), devId, region, false));
    }

    /**
     * This agent's NIXL metadata blob, to hand to peers over the side channel.
     *
     * @throws IllegalStateException while imported regions are registered (see {@link #registerImported})
     */
    public byte[] localMetadata() {
        return ctx.thread.call("get_local_md", this::localMetadataHere);
    }

    /** Loads a peer's metadata blob; returns the existing connection if that peer is already loaded. */
    public PeerConnection connect(byte[] peerMetadata) {
        byte[] blob = peerMetadata.clone();
        return ctx.thread.call("load_remote_md", () -> connectHere(blob));
    }

    /** The agent itself as a peer, for copies between two of its own registered regions. */
    public PeerConnection loopback() {
        return ctx.thread.call("loopback", () -> {
            ctx.agent("loopback");
            if (loopback == null || !loopback.isOpen()) {
                loopback = new PeerConnection(this, ctx.name, true);
            }
            return loopback;
        });
    }

    /** The region cut into blocks and prepared as the local side, once per region and block size. */
    public BlockSet localBlocks(RegisteredRegion region, long bytesPerBlock) {
        return ctx.thread.call("prep_xfer_dlist", () -> {
            if (!region.isRegistered() || !regions.contains(region)) {
                throw new HandleClosedException("prep_xfer_dlist", region.toString(), "not registered with this agent");
            }
            LocalKey key = new LocalKey(region, bytesPerBlock);
            BlockSet existing = localBlockSets.get(key);
            if (existing != null) {
                return existing;
            }
            BlockGeometry geometry =
                    BlockGeometry.of(region.kind(), region.address(), region.length(), region.devId(), bytesPerBlock);
            BlockSet set = prepare(null, geometry, "local blocks of " + region);
            localBlockSets.put(key, set);
            return set;
        });
    }

    /** Posts a transfer of slot runs between prepared block sets; completion is polled on the agent thread. */
    public TransferHandle submit(TransferRequest request) {
        return ctx.thread.call("submit", () -> transfers.submit(request));
    }

    /**
     * Posts a one-shot transfer without prepared block sets ({@code create_xfer_req}): each slot run
     * becomes one descriptor on each side. For occasional copies; repeated ones should use
     * {@link #submit}.
     */
    public TransferHandle submitOnce(
            TransferOp op,
            RegisteredRegion local,
            PeerConnection peer,
            RemoteRegion remote,
            long bytesPerBlock,
            List<SlotRun> runs) {
        BlockGeometry localGeometry =
                BlockGeometry.of(local.kind(), local.address(), local.length(), local.devId(), bytesPerBlock);
        BlockGeometry remoteGeometry =
                BlockGeometry.of(remote.kind(), remote.address(), remote.length(), remote.devId(), bytesPerBlock);
        List<SlotRun> copy = List.copyOf(runs);
        return ctx.thread.call(
                "submit_once", () -> transfers.submitOnce(op, localGeometry, peer, remoteGeometry, copy));
    }

    /** Notifications received since the last call (each is delivered once). */
    public List<Notification> takeNotifications() {
        return ctx.thread.call("get_notifs", notifications::take);
    }

    /**
     * Releases transfers, block sets, peers and registrations in NIXL's teardown order, destroys the
     * agent and stops its thread. Idempotent; later calls on this agent throw {@link HandleClosedException}.
     */
    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            ctx.thread.run("close", this::closeHere);
        } catch (HandleClosedException alreadyClosed) {
            // a concurrent close won the race
        } finally {
            ctx.thread.close();
            IN_PROCESS.remove(ctx.name);
            onClose.accept(this);
        }
    }

    @Override
    public String toString() {
        return ctx.describe();
    }

    AgentContext context() {
        return ctx;
    }

    static boolean inProcess(String agentName) {
        return IN_PROCESS.contains(agentName);
    }

    private RegisteredRegion registerHere(
            MemoryKind kind,
            long address,
            long length,
            long devId,
            @Nullable SharedMemoryRegion shared,
            boolean imported) {
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException("a registration needs an address and a positive length");
        }
        if (kind == MemoryKind.VRAM && gpuOrdinal == NO_GPU) {
            throw new IllegalStateException(ctx.describe() + " is a host-memory agent: register GPU memory with"
                    + " the agent of its GPU (TransferEngine.createAgent(name, gpuOrdinal, onAgentThread))");
        }
        RegisteredRegion region = new RegisteredRegion(this, kind, address, length, devId, shared, imported);
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment list = Descriptors.regList(ctx.capi, temp, kind, address, length, devId);
            try {
                int code = ctx.capi.registerMem(ctx.agent("register_mem"), list, MemorySegment.NULL);
                NixlStatus.check(code, "register_mem", region.toString());
            } finally {
                ctx.capi.destroyRegDlist(list);
            }
        }
        if (shared != null) {
            shared.pin();
        }
        regions.add(region);
        return region;
    }

    void deregister(RegisteredRegion region) {
        ctx.thread.run("deregister_mem", () -> deregisterHere(region));
    }

    private void deregisterHere(RegisteredRegion region) {
        if (!region.isRegistered()) {
            return;
        }
        localBlockSets.entrySet().removeIf(entry -> {
            boolean onRegion = entry.getKey().region() == region;
            if (onRegion) {
                transfers.evict(entry.getValue());
                entry.getValue().handle().close();
            }
            return onRegion;
        });
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment list = Descriptors.regList(
                    ctx.capi, temp, region.kind(), region.address(), region.length(), region.devId());
            try {
                int code = ctx.capi.deregisterMem(ctx.agent("deregister_mem"), list, MemorySegment.NULL);
                NixlStatus.check(code, "deregister_mem", region.toString());
            } finally {
                ctx.capi.destroyRegDlist(list);
            }
        }
        region.markDeregistered();
        regions.remove(region);
    }

    private byte[] localMetadataHere() {
        if (regions.stream().anyMatch(RegisteredRegion::isImported)) {
            throw new IllegalStateException(ctx.describe() + " holds imported regions: its metadata would offer them"
                    + " to peers as a remote side, where UCX falls back to emulation; take the metadata before"
                    + " importing, and initiate every transfer of imported memory from this agent");
        }
        return rawLocalMetadata();
    }

    private byte[] rawLocalMetadata() {
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment data = temp.allocate(ADDRESS);
            MemorySegment length = temp.allocate(JAVA_LONG);
            NixlStatus.check(
                    ctx.capi.getLocalMd(ctx.agent("get_local_md"), data, length), "get_local_md", ctx.describe());
            MemorySegment blob = data.get(ADDRESS, 0);
            try {
                return blob.reinterpret(length.get(JAVA_LONG, 0)).toArray(JAVA_BYTE);
            } finally {
                NixlCapi.free(blob);
            }
        }
    }

    private PeerConnection connectHere(byte[] blob) {
        String remote;
        try (Arena temp = Arena.ofConfined()) {
            MemorySegment nameOut = temp.allocate(ADDRESS);
            int code = ctx.capi.loadRemoteMd(
                    ctx.agent("load_remote_md"), temp.allocateFrom(JAVA_BYTE, blob), blob.length, nameOut);
            if (code < 0) {
                throw loadFailure(code, blob);
            }
            MemorySegment name = nameOut.get(ADDRESS, 0);
            try {
                remote = name.reinterpret(Long.MAX_VALUE).getString(0);
            } finally {
                NixlCapi.free(name);
            }
        }
        PeerConnection existing = peers.get(remote);
        if (existing != null) {
            return existing;
        }
        PeerConnection peer = new PeerConnection(this, remote, false);
        peers.put(remote, peer);
        return peer;
    }

    /** Loading one's own blob is INVALID_PARAM, which older builds report as -2: recognise it here. */
    private NixlException loadFailure(int code, byte[] blob) {
        NixlException failure = NixlStatus.exception(code, "load_remote_md", ctx.describe());
        if (failure instanceof NixlBackendException && Arrays.equals(blob, rawLocalMetadata())) {
            return new NixlInvalidParameterException(
                    failure.operation(), failure.handle(), code, "this is the agent's own metadata: use loopback()");
        }
        return failure;
    }

    BlockSet remoteBlocks(PeerConnection peer, RemoteRegion region, long bytesPerBlock) {
        return ctx.thread.call("prep_xfer_dlist", () -> {
            if (!peer.isOpen()) {
                throw new HandleClosedException("prep_xfer_dlist", peer.toString(), "the peer connection is closed");
            }
            PeerConnection.BlockKey key = new PeerConnection.BlockKey(region, bytesPerBlock);
            BlockSet existing = peer.blockSets().get(key);
            if (existing != null) {
                return existing;
            }
            BlockGeometry geometry =
                    BlockGeometry.of(region.kind(), region.address(), region.length(), region.devId(), bytesPerBlock);
            BlockSet set = prepare(peer, geometry, "blocks of " + peer + " at 0x" + Long.toHexString(region.address()));
            peer.blockSets().put(key, set);
            return set;
        });
    }

    /** {@code prep_xfer_dlist} with "" for the local side, the peer's name, or our own for loopback. */
    private BlockSet prepare(@Nullable PeerConnection peer, BlockGeometry geometry, String description) {
        NativeHandle handle = NativeHandle.create(
                description,
                (arena, out) -> {
                    try (Arena temp = Arena.ofConfined()) {
                        MemorySegment list = Descriptors.blockList(ctx.capi, temp, geometry);
                        try {
                            MemorySegment target = peer == null
                                    ? temp.allocateFrom("")
                                    : peer.isLoopback() ? ctx.cName() : peer.cName();
                            int code = ctx.capi.prepXferDlist(
                                    ctx.agent("prep_xfer_dlist"), target, list, out, MemorySegment.NULL);
                            if (code < 0) {
                                throw prepFailure(code, description, peer, geometry, list);
                            }
                        } finally {
                            ctx.capi.destroyXferDlist(list);
                        }
                    }
                },
                pointer -> NixlStatus.check(
                        ctx.capi.releaseXferDlistHandle(ctx.agent("release_xfer_dlist_handle"), pointer),
                        "release_xfer_dlist_handle",
                        description));
        return new BlockSet(this, peer, geometry, handle);
    }

    private NixlException prepFailure(
            int code, String description, @Nullable PeerConnection peer, BlockGeometry geometry, MemorySegment list) {
        NixlException failure = NixlStatus.exception(code, "prep_xfer_dlist", description);
        if (peer != null && peer.isLoopback()) {
            boolean covered = regions.stream()
                    .anyMatch(r ->
                            r.covers(geometry.kind(), geometry.baseAddress(), geometry.length(), geometry.devId()));
            return PeerDiagnosis.refineLoopback(failure, covered);
        }
        return PeerDiagnosis.refine(ctx, peer, failure, list);
    }

    void releaseBlockSet(BlockSet set) {
        ctx.thread.run("release_xfer_dlist_handle", () -> {
            transfers.evict(set);
            set.handle().close();
            localBlockSets.values().remove(set);
            PeerConnection peer = set.peer();
            if (peer != null) {
                peer.blockSets().values().remove(set);
            }
        });
    }

    boolean metadataLoaded(PeerConnection peer) {
        return ctx.thread.call("check_remote_md", () -> peer.isLoopback() || isLoaded(peer));
    }

    private boolean isLoaded(PeerConnection peer) {
        return ctx.capi.checkRemoteMd(ctx.agent("check_remote_md"), peer.cName(), MemorySegment.NULL)
                == NixlStatus.SUCCESS;
    }

    void sendNotification(PeerConnection peer, byte[] message) {
        byte[] copy = message.clone();
        ctx.thread.run("gen_notif", () -> {
            if (!peer.isOpen()) {
                throw new HandleClosedException("gen_notif", peer.toString(), "the peer connection is closed");
            }
            try (Arena temp = Arena.ofConfined()) {
                MemorySegment target = peer.isLoopback() ? ctx.cName() : peer.cName();
                int code = ctx.capi.genNotif(
                        ctx.agent("gen_notif"),
                        target,
                        temp.allocateFrom(JAVA_BYTE, copy),
                        copy.length,
                        MemorySegment.NULL);
                if (code < 0) {
                    throw PeerDiagnosis.refine(
                            ctx, peer, NixlStatus.exception(code, "gen_notif", peer.toString()), null);
                }
            }
        });
    }

    void disconnect(PeerConnection peer) {
        ctx.thread.run("invalidate_remote_md", () -> disconnectHere(peer));
    }

    /** Invalidates the peer unless NIXL already dropped it (e.g. after a remote disconnect). */
    private void disconnectHere(PeerConnection peer) {
        if (!peer.isOpen()) {
            return;
        }
        try {
            if (!peer.isLoopback() && isLoaded(peer)) {
                int code = ctx.capi.invalidateRemoteMd(ctx.agent("invalidate_remote_md"), peer.cName());
                NixlStatus.check(code, "invalidate_remote_md", peer.toString());
            }
        } finally {
            transfers.evict(peer);
            peer.release();
            peers.remove(peer.remoteAgent(), peer);
        }
    }

    private void closeHere() {
        if (ctx.isClosed()) {
            return;
        }
        Teardown teardown = new Teardown();
        teardown.step(() -> transfers.closeAll(CLOSE_GRACE));
        for (BlockSet set : List.copyOf(localBlockSets.values())) {
            teardown.step(set.handle()::close);
        }
        localBlockSets.clear();
        if (loopback != null) {
            PeerConnection self = loopback;
            teardown.step(() -> transfers.evict(self));
            teardown.step(self::release);
        }
        for (PeerConnection peer : List.copyOf(peers.values())) {
            teardown.step(() -> disconnectHere(peer));
        }
        for (RegisteredRegion region : List.copyOf(regions)) {
            teardown.step(() -> deregisterHere(region));
        }
        teardown.step(notifications::close);
        teardown.step(ctx::close);
        teardown.rethrow();
    }
}
