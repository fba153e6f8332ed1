package io.kvreuse.agent.kvevents;

import io.kvreuse.protocol.KvEventSource;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.zeromq.ZContext;

/**
 * The node agent's bridge from the engines' own KV event streams on its host into their banks
 * (docs/kv-events.md). It reads the host's event sources from the control plane, keeps one {@link
 * RankStream} per (bank, rank), restarts a stream when its source changes, and resumes a broken one
 * from where the control plane stands once the rank's snapshot has arrived. Plain Java: the agent
 * role starts and closes it.
 */
public final class KvEventBridge implements AutoCloseable {

    private static final Log log = LogFactory.getLog(KvEventBridge.class);

    private record Key(UUID bankId, int rank, long revision) {}

    private final InventoryFeed feed;
    private final KvEventMetrics metrics;
    private final Duration refreshInterval;
    private final Duration retryBackoff;
    private final ZContext zmq = new ZContext(1);
    private final Map<Key, RankStream> streams = new HashMap<>();
    /** Per stream, what its subscribers' stops have said so far: kept across the restarts of one stream. */
    private final Map<Key, SubscriberFailures> failures = new HashMap<>();

    private final Thread refresher;
    private volatile boolean running = true;

    public KvEventBridge(InventoryFeed feed, MeterRegistry registry, Duration refreshInterval, Duration retryBackoff) {
        this.feed = feed;
        this.metrics = new KvEventMetrics(registry);
        this.refreshInterval = refreshInterval;
        this.retryBackoff = retryBackoff;
        Gauge.builder("kvreuse.agent.kv.events.streams", this, KvEventBridge::streamCount)
                .description("engine KV event streams this agent subscribes to")
                .register(registry);
        this.refresher = Thread.ofPlatform().daemon().name("kvreuse-kv-events").unstarted(this::run);
    }

    public KvEventBridge start() {
        refresher.start();
        return this;
    }

    private synchronized int streamCount() {
        return streams.size();
    }

    private void run() {
        while (running) {
            try {
                refresh();
            } catch (InventoryFeed.FeedException e) {
                log.debug("event sources unavailable: " + e.getMessage());
            } catch (RuntimeException e) {
                log.warn("event source refresh failed", e);
            }
            try {
                Thread.sleep(refreshInterval.toMillis());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Reconciles the running streams with the control plane's list; public for tests and benchmarks. */
    public synchronized void refresh() throws InventoryFeed.FeedException {
        // which streams awaited their snapshot before the list was asked for: a break reported while
        // the request was in flight may be missing from its answer, which must not read as the snapshot
        Set<Key> awaiting = new HashSet<>();
        streams.forEach((k, s) -> {
            if (s.awaitingSnapshot()) {
                awaiting.add(k);
            }
        });
        List<KvEventSource> sources = feed.sources();
        Map<Key, Map.Entry<KvEventSource, KvEventSource.Stream>> wanted = new HashMap<>();
        for (KvEventSource source : sources) {
            for (KvEventSource.Stream s : source.streams()) {
                wanted.put(new Key(source.bankId(), s.rank(), source.revision()), Map.entry(source, s));
            }
        }
        Set<Key> restarted = new HashSet<>();
        var it = streams.entrySet().iterator();
        while (it.hasNext()) {
            var e = it.next();
            var now = wanted.get(e.getKey());
            // a broken rank resumes from the control plane's position once its snapshot is in
            boolean resume = now != null
                    && awaiting.contains(e.getKey())
                    && !now.getValue().needsSnapshot();
            // a subscriber that stopped on an error starts again from the control plane's position
            boolean stopped = e.getValue().stopped();
            if (stopped) {
                metrics.restartedSubscribers.increment();
                restarted.add(e.getKey());
            }
            if (now == null || resume || stopped) {
                e.getValue().close();
                it.remove();
            }
        }
        failures.keySet().retainAll(wanted.keySet());
        for (var e : wanted.entrySet()) {
            if (!streams.containsKey(e.getKey())) {
                var v = e.getValue();
                // a stopped subscriber's restart says nothing here: its failures decide what is said
                if (!restarted.contains(e.getKey())) {
                    log.info("subscribing to " + v.getKey().format() + " at "
                            + v.getValue().endpoint() + " for bank "
                            + v.getKey().bankId() + " rank "
                            + v.getValue().rank());
                }
                SubscriberFailures stops = failures.computeIfAbsent(
                        e.getKey(), k -> new SubscriberFailures("bank " + k.bankId() + " rank " + k.rank()));
                streams.put(
                        e.getKey(),
                        new RankStream(v.getKey(), v.getValue(), feed, metrics, zmq, retryBackoff, stops).start());
            }
        }
    }

    /** The last event id the control plane applied for a (bank, rank), as this agent last heard; -1 if none. */
    public synchronized long appliedThrough(UUID bankId, int rank) {
        return streams.entrySet().stream()
                .filter(e -> e.getKey().bankId().equals(bankId) && e.getKey().rank() == rank)
                .mapToLong(e -> e.getValue().appliedThrough())
                .findFirst()
                .orElse(-1);
    }

    @Override
    public synchronized void close() {
        running = false;
        refresher.interrupt();
        streams.values().forEach(RankStream::close);
        streams.clear();
        zmq.close();
    }
}
