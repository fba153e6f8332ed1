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
 * (sequence, payload) pairs that end with sequence -1 and an empty payload.
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

    TestPublisher(String topic, long firstSequence) {
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.first = firstSequence;
        this.next = firstSequence;
        pub = zmq.createSocket(SocketType.PUB);
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
