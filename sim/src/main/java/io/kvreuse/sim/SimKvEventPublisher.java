package io.kvreuse.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One rank's vLLM-style KV event publisher of a simulated engine: PUB (topic, 8-byte big-endian
 * sequence from 0, msgpack {@code EventBatch} map) and a ROUTER replay socket, on loopback ports.
 * Stored blocks carry their bank slots in a {@code slots} list (docs/kv-events.md).
 */
final class SimKvEventPublisher implements AutoCloseable {

    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket pub;
    private final ZMQ.Socket router;
    private final byte[] topic;
    private final String endpoint;
    private final String replayEndpoint;
    private final ConcurrentSkipListMap<Long, byte[]> history = new ConcurrentSkipListMap<>();
    private final Thread replay;
    private final int rank;
    private volatile boolean running = true;
    private long next;

    SimKvEventPublisher(String topic, int rank) {
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.rank = rank;
        pub = zmq.createSocket(SocketType.PUB);
        pub.setSndHWM(100_000);
        pub.bind("tcp://127.0.0.1:*");
        endpoint = pub.getLastEndpoint();
        router = zmq.createSocket(SocketType.ROUTER);
        router.bind("tcp://127.0.0.1:*");
        replayEndpoint = router.getLastEndpoint();
        replay = Thread.ofPlatform()
                .daemon()
                .name("sim-kv-events-replay-" + rank)
                .start(this::serveReplay);
    }

    String endpoint() {
        return endpoint;
    }

    String replayEndpoint() {
        return replayEndpoint;
    }

    /** Publishes one BlockStored of a chain segment; answers its sequence. */
    synchronized long stored(long[] hashes, Long parent, int[] slots) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("ts").packDouble(System.currentTimeMillis() / 1000.0);
            p.packString("events").packArrayHeader(1);
            p.packMapHeader(5);
            p.packString("type").packString("BlockStored");
            p.packString("block_hashes").packArrayHeader(hashes.length);
            for (long h : hashes) {
                p.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(h)));
            }
            p.packString("parent_block_hash");
            if (parent == null) {
                p.packNil();
            } else {
                p.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(parent)));
            }
            p.packString("medium").packString("GPU");
            p.packString("slots").packArrayHeader(slots.length);
            for (int s : slots) {
                p.packInt(s);
            }
            p.packString("data_parallel_rank").packInt(rank);
            return publish(p.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private long publish(byte[] payload) {
        long seq = next++;
        history.put(seq, payload);
        pub.sendMore(topic);
        pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
        pub.send(payload);
        return seq;
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
                long from = ByteBuffer.wrap(frames.getLast()).getLong();
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
            } catch (org.zeromq.ZMQException | java.nio.BufferUnderflowException e) {
                if (!running) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            replay.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        zmq.close();
    }
}
