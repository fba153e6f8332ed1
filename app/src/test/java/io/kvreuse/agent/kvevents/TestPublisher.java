package io.kvreuse.agent.kvevents;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * An engine's KV event publisher as the formats describe it: a PUB socket sending (topic, 8-byte
 * big-endian sequence, payload) and a ROUTER replay socket answering a start sequence with
 * (sequence, payload) pairs that end with sequence -1 and an empty payload. The PUB side is an XPUB
 * socket, so the test knows when a subscriber joined: a batch published after {@link
 * #awaitNewSubscription()} returned reaches that subscriber (ZMQ's slow joiner cannot drop it).
 */
final class TestPublisher implements AutoCloseable {

    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket pub;
    private final ZMQ.Socket router;
    private final Thread replay;
    private final byte[] topic;
    private final ConcurrentSkipListMap<Long, byte[]> history = new ConcurrentSkipListMap<>();
    private final String endpoint;
    private final String replayEndpoint;
    private volatile boolean running = true;
    private final java.util.concurrent.atomic.AtomicInteger unanswered =
            new java.util.concurrent.atomic.AtomicInteger();
    private long next;
    private final long first;
    // subscribe messages the XPUB socket delivered, and how many of them tests have awaited
    private int subscriptions;
    private int awaited;
    private final java.util.concurrent.atomic.AtomicInteger replaysAnswered =
            new java.util.concurrent.atomic.AtomicInteger();

    TestPublisher(String topic, long firstSequence) {
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.first = firstSequence;
        this.next = firstSequence;
        pub = zmq.createSocket(SocketType.XPUB);
        // every subscribe message, also a second subscriber's to the same topic (an agent restarted)
        pub.setXpubVerbose(true);
        pub.setSndHWM(1_000_000);
        pub.bind("tcp://127.0.0.1:*");
        endpoint = pub.getLastEndpoint();
        ZMQ.Socket r = zmq.createSocket(SocketType.ROUTER);
        r.bind("tcp://127.0.0.1:*");
        replayEndpoint = r.getLastEndpoint();
        router = r;
        replay = Thread.ofPlatform().daemon().name("test-publisher-replay").start(this::serveReplay);
    }

    String endpoint() {
        return endpoint;
    }

    String replayEndpoint() {
        return replayEndpoint;
    }

    long nextSequence() {
        return next;
    }

    /**
     * Waits until a subscriber joined that no earlier call waited for; once the XPUB socket delivered
     * its subscribe message, the socket sends it every later batch of its topic.
     */
    synchronized void awaitNewSubscription() {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        while (subscriptions <= awaited) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no new subscriber within 20 s (" + subscriptions
                        + " so far); ZMQ and bridge threads:" + zmqThreads());
            }
            readSubscriptions(100);
        }
        awaited++;
    }

    /** What the bridge's and ZMQ's threads were doing, for a failure that happens only on a loaded machine. */
    private static String zmqThreads() {
        StringBuilder out = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            String name = t.getName();
            if (name.contains("kv-events") || name.startsWith("reaper") || name.startsWith("iothread")) {
                out.append('\n').append(name).append(' ').append(t.getState());
                for (int i = 0; i < Math.min(8, stack.length); i++) {
                    out.append("\n    at ").append(stack[i]);
                }
            }
        });
        return out.toString();
    }

    /** Counts every subscriber that joined so far as awaited: the next await waits for a later one. */
    synchronized void subscriptionsAwaited() {
        readSubscriptions(0);
        awaited = subscriptions;
    }

    /** Replay requests answered so far (their end marker sent). */
    int replaysAnswered() {
        return replaysAnswered.get();
    }

    /**
     * Waits until a replay request after {@code mark} answered requests was answered: the catch-up of
     * a subscriber that started after the mark was taken, which asks before it reads live batches.
     */
    void awaitReplayAnsweredAfter(int mark) {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        while (replaysAnswered.get() <= mark) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no replay request answered within 20 s");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Subscribe messages seen so far. */
    synchronized int subscriptions() {
        readSubscriptions(0);
        return subscriptions;
    }

    private void readSubscriptions(int timeoutMs) {
        pub.setReceiveTimeOut(timeoutMs);
        for (byte[] m = pub.recv(); m != null; m = pub.recv(ZMQ.DONTWAIT)) {
            if (m.length > 0 && m[0] == 1) {
                subscriptions++;
            }
        }
    }

    /** Publishes a payload at the next sequence (kept for replay). */
    synchronized long publish(byte[] payload) {
        long seq = next++;
        history.put(seq, payload);
        send(seq, payload);
        return seq;
    }

    /** Keeps a payload for replay without publishing it: subscribers see a gap the replay fills. */
    synchronized long withhold(byte[] payload) {
        long seq = next++;
        history.put(seq, payload);
        return seq;
    }

    /** The next {@code requests} replay requests get no answer at all (an engine host too busy to answer). */
    void leaveReplaysUnanswered(int requests) {
        unanswered.set(requests);
    }

    /** Loses sequences for good: neither published nor replayable. */
    synchronized void lose(int count) {
        next += count;
    }

    /** An engine restart: sequences count from the start again, the replay buffer is empty. */
    synchronized void restart() {
        history.clear();
        next = first;
    }

    /** Sends raw frames, e.g. a malformed payload. */
    synchronized long publishRaw(byte[] payload) {
        return publish(payload);
    }

    private void send(long seq, byte[] payload) {
        pub.sendMore(topic);
        pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        pub.send(payload);
    }

    private void serveReplay() {
        router.setReceiveTimeOut(100);
        while (running) {
            try {
                byte[] id = router.recv();
                if (id == null) {
                    continue;
                }
                List<byte[]> frames = new ArrayList<>();
                while (router.hasReceiveMore()) {
                    frames.add(router.recv());
                }
                if (unanswered.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    continue;
                }
                byte[] start = frames.getLast();
                long from = ByteBuffer.wrap(start).getLong();
                for (Map.Entry<Long, byte[]> e : history.tailMap(from).entrySet()) {
                    router.sendMore(id);
                    router.sendMore(new byte[0]);
                    router.sendMore(ByteBuffer.allocate(8).putLong(e.getKey()).array());
                    router.send(e.getValue());
                }
                router.sendMore(id);
                router.sendMore(new byte[0]);
                router.sendMore(ByteBuffer.allocate(8).putLong(-1).array());
                router.send(new byte[0]);
                replaysAnswered.incrementAndGet();
            } catch (org.zeromq.ZMQException e) {
                return;
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            replay.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        zmq.close();
    }
}
