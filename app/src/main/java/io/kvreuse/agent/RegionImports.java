package io.kvreuse.agent;

import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.RegisteredRegion;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The engines' regions this agent imported, each mapped once and registered whole, once per NIXL
 * agent that uses it. An entry whose engine replaced the memory behind its reference is retired and
 * closed once no part uses it any more; the next part imports the new memory.
 */
final class RegionImports implements AutoCloseable {

    private static final Log log = LogFactory.getLog(RegionImports.class);

    private final Map<String, RegionImporter> importers = new HashMap<>();
    private final Map<String, Entry> current = new HashMap<>();

    RegionImports(List<RegionImporter> importers) {
        importers.forEach(i -> this.importers.put(i.scheme(), i));
    }

    /** A region registered with {@code agent}; release it with {@link Use#close()} when the part is done. */
    synchronized Use acquire(String regionRef, NixlAgent agent, long devId) {
        Entry entry = current.get(regionRef);
        if (entry != null && !entry.region.isCurrent()) {
            log.info("region " + regionRef + " was replaced by its engine: importing it again");
            current.remove(regionRef);
            entry.retired = true;
            entry.closeIfIdle();
            entry = null;
        }
        if (entry == null) {
            entry = new Entry(importer(regionRef).open(regionRef));
            current.put(regionRef, entry);
        }
        RegisteredRegion registered = entry.registrations.get(agent);
        if (registered == null || !registered.isRegistered()) {
            registered = entry.region.register(agent, devId);
            entry.registrations.put(agent, registered);
        }
        entry.users++;
        return new Use(this, entry, registered);
    }

    private RegionImporter importer(String regionRef) {
        int colon = regionRef.indexOf("://");
        RegionImporter importer = colon < 0 ? null : importers.get(regionRef.substring(0, colon));
        if (importer == null) {
            throw new PartRefusedException("region reference " + regionRef + " has no known scheme (expected one of "
                    + importers.keySet() + ")");
        }
        return importer;
    }

    synchronized int size() {
        return current.size();
    }

    private synchronized void release(Entry entry) {
        entry.users--;
        entry.closeIfIdle();
    }

    @Override
    public synchronized void close() {
        for (Entry entry : new ArrayList<>(current.values())) {
            entry.retired = true;
            entry.users = 0;
            entry.closeIfIdle();
        }
        current.clear();
    }

    /** One part's hold on a registered region. */
    record Use(RegionImports owner, Entry entry, RegisteredRegion registered) implements AutoCloseable {
        long size() {
            return entry.region.size();
        }

        @Override
        public void close() {
            owner.release(entry);
        }
    }

    static final class Entry {
        private final ImportedRegion region;
        private final Map<NixlAgent, RegisteredRegion> registrations = new HashMap<>();
        private int users;
        private boolean retired;

        private Entry(ImportedRegion region) {
            this.region = region;
        }

        /** Deregisters from every agent, then unmaps: NIXL must let go of memory before it disappears. */
        private void closeIfIdle() {
            if (!retired || users > 0) {
                return;
            }
            registrations.values().forEach(RegisteredRegion::close);
            registrations.clear();
            region.close();
        }
    }
}
