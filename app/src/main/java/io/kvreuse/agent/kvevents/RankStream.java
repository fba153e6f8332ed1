package io.kvreuse.agent.kvevents;

import io.kvreuse.protocol.ClearPolicy;
import io.kvreuse.protocol.KvEventFormat;
import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.protocol.StreamBreak;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One rank's engine stream into its bank. A receiver thread subscribes (SUB), checks sequences,
 * fills gaps through the replay socket and translates engine events; a forwarder thread posts them
 * to the control plane in order, batched, retried, never reordered. A gap the replay cannot fill, a
 * backwards sequence (the engine restarted) or a payload that is no batch makes the rank need a
 * snapshot; the stream then drops (and counts) its events until the bridge sees the snapshot.
 */
final class RankStream implements AutoCloseable {

    private static final Log log = LogFactory.getLog(RankStream.class);
    /** One ingestion batch's limits (docs/api.md): 1,024 events, 16,384 blocks plus removed hashes. */
    static final int MAX_EVENTS = 1024;

    static final int MAX_ITEMS = 16_384;

    /** What the forwarder does, in stream order. */
    private sealed interface Item {}

    /**
     * Events as their JSON (one array each, {@link EventJson}), with how many blocks and hashes they
     * carry and the slots their STORED events fill (for {@link #merge}; empty once merged).
     */
    private record Events(
            List<byte[]> events, int items, @Nullable Long completes, int[] slots) implements Item {

        Events(List<byte[]> events, int items, @Nullable Long completes) {
            this(events, items, completes, NO_SLOTS);
        }
    }

    private static final int[] NO_SLOTS = new int[0];

    private record Reset() implements Item {}

    private record Break(StreamBreak report) implements Item {}

    private final KvEventSource source;
    private final KvEventSource.Stream stream;
    private final KvEventCodec codec;
    private final InventoryFeed feed;
    private final KvEventMetrics metrics;
    private final ZContext zmq;
    private final Duration retryBackoff;
    private final SubscriberFailures failures;
    private final BlockingQueue<Item> queue = new ArrayBlockingQueue<>(8192);
    private final BlockDepths positions = new BlockDepths();
    private final EventJson json = new EventJson();
    private final Thread receiver;
    private final Thread forwarder;
    private volatile boolean running = true;

    // receiver state
    private @Nullable Long expected;
    /** Live sequences below it arrived through the catch-up replay already (until live traffic passes it). */
    private long duplicatesBelow = Long.MIN_VALUE;

    private volatile boolean broken;
    // forwarder state
    private long nextEventId;
    private long epoch;
    private volatile boolean breakReported;
    private volatile long appliedThrough;

    RankStream(
            KvEventSource source,
            KvEventSource.Stream stream,
            InventoryFeed feed,
            KvEventMetrics metrics,
            ZContext zmq,
            Duration retryBackoff,
            SubscriberFailures failures) {
        this.source = source;
        this.stream = stream;
        this.codec = codecOf(source.format());
        this.feed = feed;
        this.metrics = metrics;
        this.zmq = zmq;
        this.retryBackoff = retryBackoff;
        this.failures = failures;
        this.epoch = source.bankEpoch();
        this.nextEventId = stream.eventsStarted() ? stream.appliedThroughEventId() + 1 : 0;
        this.appliedThrough = stream.appliedThroughEventId();
        if (stream.sourceSequence() != null) {
            expected = stream.sourceSequence() + 1;
        } else if (!stream.eventsStarted()) {
            expected = codec.firstSequence();
        }
        broken = stream.needsSnapshot();
        breakReported = stream.needsSnapshot();
        String name = "kvreuse-kv-events-" + source.bankId().toString().substring(0, 8) + "-r" + stream.rank();
        receiver = Thread.ofPlatform().daemon().name(name + "-sub").unstarted(this::receive);
        forwarder = Thread.ofPlatform().daemon().name(name + "-fwd").unstarted(this::forward);
    }

    private static KvEventCodec codecOf(KvEventFormat format) {
        return switch (format) {
            case VLLM_KV_EVENTS -> new VllmKvEventsCodec();
            case MOONCAKE_RFC1527 -> new Rfc1527Codec();
        };
    }

    RankStream start() {
        forwarder.start();
        receiver.start();
        return this;
    }

    UUID bankId() {
        return source.bankId();
    }

    /** The rank lost events and its break is on record: it resumes once its snapshot arrives. */
    boolean awaitingSnapshot() {
        return broken && breakReported;
    }

    /** The subscriber ended while the stream still runs (an error): the bridge starts the stream again. */
    boolean stopped() {
        return running && !receiver.isAlive();
    }

    long appliedThrough() {
        return appliedThrough;
    }

    /**
     * How long a connection of the agent's may take to complete its ZMTP handshake before it is
     * dropped and made again. JeroMQ's connecting side now and then completes a TCP connect but never
     * starts the handshake (its poller registers the connected channel while the connect's cancelled
     * key is still in place; a few in a hundred fresh connections here, most often a context's first).
     * Only this limit ends such a connection: at JeroMQ's default of 30 s, a started or restarted agent
     * left a rank's subscription silent for half a minute now and then, and a replay request
     * unanswered. The engines publish on the agent's own host, where a handshake takes well under a
     * millisecond, so one second is generous and still bounds the stall to about a second.
     */
    static final int HANDSHAKE_LIMIT_MS = 1_000;

    /** What every socket the agent connects (the subscriber, the replay requests) is set up with. */
    static void connecting(ZMQ.Socket socket) {
        socket.setHandshakeIvl(HANDSHAKE_LIMIT_MS);
    }

    // ---- receiver ----

    private void receive() {
        try (ZMQ.Socket sub = zmq.createSocket(SocketType.SUB)) {
            sub.setRcvHWM(1_000_000);
            sub.setReceiveTimeOut(200);
            connecting(sub);
            sub.connect(stream.endpoint());
            sub.subscribe(stream.topic() == null ? new byte[0] : stream.topic().getBytes(StandardCharsets.UTF_8));
            catchUp();
            long steadyAt = System.nanoTime() + SubscriberFailures.STEADY.toNanos();
            boolean steady = false;
            while (running) {
                if (!steady && System.nanoTime() - steadyAt >= 0) {
                    steady = true;
                    String recovered = failures.running();
                    if (recovered != null) {
                        log.info(recovered);
                    }
                }
                byte[] first = sub.recv();
                if (first == null) {
                    continue;
                }
                List<byte[]> frames = new ArrayList<>(3);
                frames.add(first);
                while (sub.hasReceiveMore()) {
                    frames.add(sub.recv());
                }
                if (frames.size() < 2 || frames.get(frames.size() - 2).length != 8) {
                    metrics.malformedBatches.increment();
                    log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": a message of " + frames.size()
                            + " frames is no (topic, sequence, payload); ignored");
                    continue;
                }
                long seq = ByteBuffer.wrap(frames.get(frames.size() - 2)).getLong();
                onMessage(seq, frames.getLast());
            }
        } catch (RuntimeException e) {
            // ZMQ's own errors and anything else: the bridge's next refresh starts the stream again
            if (running) {
                // a stream that fails at every start would say so at every refresh: the failures decide
                String line = failures.stopped(e, System.nanoTime());
                if (line != null) {
                    log.warn(line);
                }
                log.debug("subscriber stopped", e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whatever the engine published before this subscription (while no agent listened, or before
     * the subscriber joined) comes from the replay socket; the live socket may repeat some of it.
     */
    private void catchUp() throws InterruptedException {
        Long want = expected;
        if (want == null || broken || stream.replayEndpoint() == null) {
            return;
        }
        for (Replayed r : replay(want, Long.MAX_VALUE)) {
            if (r.seq() == expected) {
                metrics.replayed.increment();
                if (!handle(r.seq(), r.payload())) {
                    return;
                }
            }
        }
        duplicatesBelow = expected == null ? Long.MIN_VALUE : expected;
    }

    private void onMessage(long seq, byte[] payload) throws InterruptedException {
        metrics.engineBatches.increment();
        if (seq < duplicatesBelow) {
            return;
        }
        duplicatesBelow = Long.MIN_VALUE;
        if (broken) {
            metrics.awaitingSnapshot.increment();
            return;
        }
        Long want = expected;
        if (want != null && seq < want) {
            metrics.restarts.increment();
            breakStream(StreamBreak.Kind.RESTART, want, seq);
            metrics.awaitingSnapshot.increment();
            return;
        }
        if (want != null && seq > want) {
            metrics.gaps.increment();
            List<Replayed> replayed = replay(want, seq);
            if (fills(replayed, want, seq)) {
                // on record before the replayed events go out: an agent restart in between catches up
                // through the replay socket again without seeing (and reporting) this gap a second time
                queue.put(new Break(new StreamBreak(StreamBreak.Kind.REPLAYED, want, seq)));
            }
            for (Replayed r : replayed) {
                if (r.seq() == expected) {
                    metrics.replayed.increment();
                    if (!handle(r.seq(), r.payload())) {
                        return;
                    }
                }
            }
            if (expected != null && expected < seq) {
                metrics.gapsUnrecovered.increment();
                breakStream(StreamBreak.Kind.GAP, expected, seq);
                metrics.awaitingSnapshot.increment();
                return;
            }
        }
        handle(seq, payload);
    }

    /** Whether the replay returned every sequence {@code from .. until-1} (the list is sorted). */
    private static boolean fills(List<Replayed> replayed, long from, long until) {
        long next = from;
        for (Replayed r : replayed) {
            if (r.seq() == next) {
                next++;
            }
        }
        return next == until;
    }

    private void breakStream(StreamBreak.Kind kind, long want, long got) throws InterruptedException {
        broken = true;
        log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": " + kind + " (needed sequence " + want
                + ", got " + got + "); the rank needs a snapshot");
        queue.put(new Break(new StreamBreak(kind, want, got)));
    }

    /** Decodes and queues one engine batch; false when it broke the stream. */
    private boolean handle(long seq, byte[] payload) throws InterruptedException {
        EngineBatch batch;
        try {
            batch = codec.decode(seq, payload);
        } catch (MalformedPayloadException e) {
            metrics.malformedBatches.increment();
            log.warn("bank " + source.bankId() + " rank " + stream.rank() + " sequence " + seq + ": " + e.getMessage());
            breakStream(StreamBreak.Kind.GAP, seq, seq + 1);
            return false;
        }
        expected = seq + 1;
        if (!batch.malformed().isEmpty()) {
            metrics.malformed.increment(batch.malformed().size());
            log.warn("bank " + source.bankId() + " rank " + stream.rank() + " sequence " + seq + ": "
                    + batch.malformed().size() + " malformed events skipped, first: "
                    + batch.malformed().getFirst());
        }
        metrics.received.increment(batch.events().size());
        List<byte[]> out = new ArrayList<>(batch.events().size());
        int items = 0;
        IntList slots = new IntList();
        for (KvEvent event : batch.events()) {
            if (!event.onGpu()) {
                metrics.offGpu.increment();
                continue;
            }
            switch (event) {
                case KvEvent.Stored s -> {
                    byte[] e = stored(s);
                    if (e != null) {
                        out.add(e);
                        items += s.hashes().length;
                        slots.addAll(java.util.Objects.requireNonNull(s.slots()));
                    }
                }
                case KvEvent.Removed r -> {
                    for (long h : r.hashes()) {
                        positions.remove(h);
                    }
                    out.add(json.removed(r.hashes()));
                    items += r.hashes().length;
                }
                case KvEvent.Cleared c -> {
                    if (source.allBlocksCleared() == ClearPolicy.NATIVE_CACHE_CLEARED) {
                        out.add(EventJson.NATIVE_CACHE_CLEARED);
                    } else {
                        queue.put(new Events(out, items, null, slots.toArray()));
                        queue.put(new Reset());
                        positions.clear();
                        out = new ArrayList<>();
                        items = 0;
                        slots = new IntList();
                    }
                }
            }
        }
        queue.put(new Events(out, items, seq, slots.toArray()));
        return true;
    }

    /** A growable int array. */
    private static final class IntList {
        private int[] values = NO_SLOTS;
        private int size;

        void addAll(int[] more) {
            if (size + more.length > values.length) {
                values = java.util.Arrays.copyOf(values, Math.max(2 * values.length, size + more.length));
            }
            System.arraycopy(more, 0, values, size, more.length);
            size += more.length;
        }

        int[] toArray() {
            return size == 0 ? NO_SLOTS : java.util.Arrays.copyOf(values, size);
        }
    }

    /** The STORED event's JSON; null when it is left out (no slots, or slots outside the bank). */
    private byte @Nullable [] stored(KvEvent.Stored s) {
        int[] slots = s.slots();
        if (slots == null) {
            metrics.unmapped.increment();
            return null;
        }
        for (int slot : slots) {
            if (slot >= source.capacityBlocks()) {
                metrics.unmapped.increment();
                return null;
            }
        }
        Integer first;
        if (s.depth() != null) {
            first = s.depth();
        } else if (s.parent() == null) {
            first = 0;
        } else {
            int parentDepth = positions.get(s.parent());
            first = parentDepth < 0 ? null : parentDepth + 1;
        }
        if (positions.size() > 4 * source.capacityBlocks() + 1024) {
            positions.clear(); // bounded; the control plane places what the agent forgot
        }
        if (first != null) {
            long[] hashes = s.hashes();
            for (int i = 0; i < hashes.length; i++) {
                positions.put(hashes[i], first + i);
            }
        }
        return json.stored(s.hashes(), s.parent(), first, slots);
    }

    private record Replayed(long seq, byte[] payload) {}

    /**
     * Receive timeouts of successive replay requests while the replay socket stays silent: a loaded
     * engine host may answer late, and a gap given up on costs the rank a snapshot. An answer that
     * ends (the end marker) is final, whatever it held.
     */
    static final int[] REPLAY_TIMEOUTS_MS = {2_000, 4_000, 8_000};

    /** Engine batches {@code from..until-1} from the replay socket, as many as it still holds. */
    private List<Replayed> replay(long from, long until) {
        java.util.TreeMap<Long, byte[]> got = new java.util.TreeMap<>();
        if (stream.replayEndpoint() == null) {
            return List.of();
        }
        for (int attempt = 0; attempt < REPLAY_TIMEOUTS_MS.length && running; attempt++) {
            if (replayOnce(from, until, REPLAY_TIMEOUTS_MS[attempt], got)) {
                break;
            }
            if (until != Long.MAX_VALUE && got.size() == until - from) {
                break;
            }
            log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": replay timed out after "
                    + REPLAY_TIMEOUTS_MS[attempt] + " ms"
                    + (attempt + 1 < REPLAY_TIMEOUTS_MS.length ? "; asking again" : "; giving up"));
        }
        List<Replayed> out = new ArrayList<>(got.size());
        got.forEach((seq, payload) -> out.add(new Replayed(seq, payload)));
        return out;
    }

    /** One replay request; whether its answer ended (rather than timing out). */
    private boolean replayOnce(long from, long until, int timeoutMs, java.util.Map<Long, byte[]> got) {
        try (ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER)) {
            dealer.setLinger(0);
            dealer.setReceiveTimeOut(timeoutMs);
            connecting(dealer);
            dealer.connect(stream.replayEndpoint());
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(from).array());
            while (running) {
                List<byte[]> frames = new ArrayList<>(3);
                byte[] f = dealer.recv();
                if (f == null) {
                    return false;
                }
                frames.add(f);
                while (dealer.hasReceiveMore()) {
                    frames.add(dealer.recv());
                }
                if (frames.getFirst().length == 0) {
                    frames.removeFirst();
                }
                if (frames.size() < 2 || frames.getFirst().length != 8) {
                    return true;
                }
                long seq = ByteBuffer.wrap(frames.getFirst()).getLong();
                if (seq < 0) {
                    return true;
                }
                if (seq >= from && seq < until) {
                    got.putIfAbsent(seq, frames.get(1));
                }
            }
        } catch (org.zeromq.ZMQException e) {
            log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": replay failed: " + e);
        }
        return true;
    }

    // ---- forwarder ----

    private void forward() {
        try {
            while (running) {
                Item item = queue.poll(100, TimeUnit.MILLISECONDS);
                if (item == null) {
                    continue;
                }
                switch (item) {
                    case Events e -> send(merge(e));
                    case Reset r -> reset();
                    case Break b -> report(b.report());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * This batch and the queued ones right behind it, up to the size of one ingestion batch and up to
     * the first engine batch that stores into a slot an earlier one of the merge already stored: the
     * events API refuses a batch that stores two blocks at one slot (duplicate-slot), while the same
     * engine batches sent apart are each applied, the later one evicting the earlier's block. (A
     * removal in between would make the merge acceptable again; it is not tracked, so such a merge is
     * cut too, which costs only a request.)
     */
    private Events merge(Events first) {
        if (!(queue.peek() instanceof Events)) {
            return first;
        }
        List<byte[]> events = new ArrayList<>(MAX_EVENTS);
        events.addAll(first.events());
        int items = first.items();
        Long completes = first.completes();
        java.util.BitSet filled = new java.util.BitSet();
        for (int slot : first.slots()) {
            filled.set(slot);
        }
        while (queue.peek() instanceof Events next
                && events.size() + next.events().size() <= MAX_EVENTS
                && items + next.items() <= MAX_ITEMS
                && fillsNone(filled, next.slots())) {
            for (int slot : next.slots()) {
                filled.set(slot);
            }
            queue.poll();
            events.addAll(next.events());
            items += next.items();
            if (next.completes() != null) {
                completes = next.completes();
            }
        }
        return new Events(events, items, completes);
    }

    private static boolean fillsNone(java.util.BitSet filled, int[] slots) {
        for (int slot : slots) {
            if (filled.get(slot)) {
                return false;
            }
        }
        return true;
    }

    private void send(Events e) throws InterruptedException {
        if (e.events().isEmpty()) {
            return;
        }
        if (e.events().size() > MAX_EVENTS || e.items() > MAX_ITEMS) {
            int half = e.events().size() / 2;
            send(new Events(e.events().subList(0, half), e.items() / 2, null));
            send(new Events(e.events().subList(half, e.events().size()), e.items() / 2, e.completes()));
            return;
        }
        while (running) {
            long started = System.nanoTime();
            try {
                appliedThrough = feed.post(source.bankId(), stream.rank(), nextEventId, e.events(), e.completes());
                metrics.post.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                nextEventId += e.events().size();
                metrics.forwarded.increment(e.events().size());
                return;
            } catch (InventoryFeed.FeedException failure) {
                if (failure.transientFailure()) {
                    metrics.retries.increment();
                    Thread.sleep(retryBackoff.toMillis());
                } else if (failure.status() == 400 || failure.status() == 422) {
                    refusedBatch(e, failure);
                    return;
                } else {
                    // snapshot-required, event-gap, bank gone: the control plane holds the rank's truth
                    log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": " + failure.getMessage());
                    broken = true;
                    breakReported = true;
                    return;
                }
            }
        }
    }

    /** An invalid batch: its events are tried one by one so only the invalid ones are left out. */
    private void refusedBatch(Events e, InventoryFeed.FeedException failure) throws InterruptedException {
        if (e.events().size() == 1) {
            metrics.refused.increment();
            log.warn("bank " + source.bankId() + " rank " + stream.rank() + ": event refused: " + failure.getMessage());
            return;
        }
        for (int i = 0; i < e.events().size(); i++) {
            Long completes = i == e.events().size() - 1 ? e.completes() : null;
            send(new Events(List.of(e.events().get(i)), 1, completes));
        }
    }

    private void reset() throws InterruptedException {
        while (running) {
            try {
                feed.reset(source.bankId(), epoch);
                epoch++;
                metrics.resets.increment();
                return;
            } catch (InventoryFeed.FeedException failure) {
                if (!failure.transientFailure()) {
                    log.warn("bank " + source.bankId() + ": reset refused: " + failure.getMessage());
                    return;
                }
                metrics.retries.increment();
                Thread.sleep(retryBackoff.toMillis());
            }
        }
    }

    private void report(StreamBreak report) throws InterruptedException {
        while (running) {
            try {
                feed.streamBroke(source.bankId(), stream.rank(), report);
                if (report.kind().lost()) {
                    breakReported = true;
                } else {
                    metrics.gapsRecorded.increment();
                }
                return;
            } catch (InventoryFeed.FeedException failure) {
                if (!failure.transientFailure()) {
                    log.warn("bank " + source.bankId() + ": stream break " + report.kind() + " refused: "
                            + failure.getMessage());
                    if (report.kind().lost()) {
                        breakReported = true;
                    }
                    return;
                }
                metrics.retries.increment();
                Thread.sleep(retryBackoff.toMillis());
            }
        }
    }

    @Override
    public void close() {
        running = false;
        // the receiver's socket wakes within its receive timeout; interrupting a ZMQ thread breaks its context
        forwarder.interrupt();
        try {
            receiver.join(2000);
            forwarder.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
