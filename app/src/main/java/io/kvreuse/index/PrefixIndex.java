package io.kvreuse.index;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory prefix index: which published banks of a layout domain hold the longest
 * root-aligned prefix of a request's block-hash chain. Writes (one at a time, under a lock) apply
 * whole batches atomically per bank; lookups take no lock and never see half a batch. See the
 * package documentation for the design.
 */
public final class PrefixIndex {

    private final ReentrantLock writeLock = new ReentrantLock();
    private final HolderTable table;
    private final LineageIds lineages = new LineageIds();
    private final BatchWriter writer;
    private final CoverageSearch search;
    private final ConcurrentHashMap<UUID, Bank> banksById = new ConcurrentHashMap<>();
    private volatile @Nullable Bank[] banks = new Bank[0];
    private volatile Map<String, Integer> domains = Map.of();
    private int nextBankIndex;
    private long entries;

    public PrefixIndex() {
        this(0);
    }

    /** An index presized for {@code expectedHashes} distinct sequence hashes. */
    public PrefixIndex(int expectedHashes) {
        this.table = new HolderTable(expectedHashes);
        this.writer = new BatchWriter(table, lineages);
        this.search = new CoverageSearch(table);
    }

    /** Builds an index from stored banks, e.g. read from PostgreSQL at startup. */
    public static PrefixIndex rebuild(Stream<BankSnapshot> banks) {
        PrefixIndex index = new PrefixIndex();
        banks.forEach(index::restore);
        return index;
    }

    /** Registers a stored bank with its blocks in one batch, published if it was. */
    public void restore(BankSnapshot snapshot) {
        registerBank(snapshot.bankId(), snapshot.domainId(), snapshot.bankEpoch(), snapshot.capacityBlocks());
        apply(snapshot.bankId(), snapshot.bankEpoch(), snapshot.blocks());
        if (snapshot.published()) {
            publish(snapshot.bankId());
        }
    }

    /** Adds an empty, unpublished bank. */
    public void registerBank(UUID bankId, String domainId, long bankEpoch, int capacityBlocks) {
        Objects.requireNonNull(bankId, "bankId");
        Objects.requireNonNull(domainId, "domainId");
        if (capacityBlocks <= 0) {
            throw new IllegalArgumentException("capacityBlocks must be > 0, was " + capacityBlocks);
        }
        locked(() -> {
            if (banksById.containsKey(bankId)) {
                throw new IllegalStateException("bank " + bankId + " is already in the prefix index");
            }
            if (nextBankIndex > Holders.BANK_MASK) {
                throw new IllegalStateException("prefix index bank indexes exhausted");
            }
            Bank bank = new Bank(bankId, nextBankIndex++, domainIndex(domainId), capacityBlocks, bankEpoch);
            Bank[] grown = Arrays.copyOf(banks, bank.index + 1);
            grown[bank.index] = bank;
            banks = grown;
            banksById.put(bankId, bank);
        });
    }

    /** Removes the bank and all its blocks. */
    public void dropBank(UUID bankId) {
        locked(() -> {
            Bank bank = require(bankId);
            BankView view = bank.view;
            runBatch(bank, () -> removeAll(bank), view.epoch(), false);
            banksById.remove(bankId);
            Bank[] shrunk = banks.clone();
            shrunk[bank.index] = null;
            banks = shrunk;
        });
    }

    /** Makes the bank's inventory visible to lookups. */
    public void publish(UUID bankId) {
        setPublished(bankId, true);
    }

    /** Hides the bank from lookups; its blocks stay indexed. */
    public void unpublish(UUID bankId) {
        setPublished(bankId, false);
    }

    /**
     * Applies the events in order as one atomic change of the bank. Returns false, changing
     * nothing, when {@code bankEpoch} is not the bank's epoch (the batch is from before a reset).
     *
     * @throws IllegalArgumentException (changing nothing) if a stored block's slot is outside the bank
     */
    public boolean apply(UUID bankId, long bankEpoch, List<? extends BlockEvent> batch) {
        writeLock.lock();
        try {
            Bank bank = require(bankId);
            BankView view = bank.view;
            if (view.epoch() != bankEpoch) {
                return false;
            }
            for (BlockEvent event : batch) {
                if (event instanceof StoredBlock stored && stored.slot() >= bank.capacity) {
                    throw new IllegalArgumentException(
                            "slot " + stored.slot() + " is outside bank " + bankId + " of capacity " + bank.capacity);
                }
            }
            if (!batch.isEmpty()) {
                runBatch(bank, () -> batch.forEach(event -> applyOne(bank, event)), bankEpoch, view.published());
            }
            return true;
        } finally {
            writeLock.unlock();
        }
    }

    /** Empties the bank and moves it to {@code newEpoch}, which must be newer than its epoch. */
    public void reset(UUID bankId, long newEpoch) {
        locked(() -> {
            Bank bank = require(bankId);
            BankView view = bank.view;
            if (newEpoch <= view.epoch()) {
                throw new IllegalArgumentException("bank " + bankId + " is at epoch " + view.epoch()
                        + "; a reset needs a newer one, not " + newEpoch);
            }
            runBatch(bank, () -> removeAll(bank), newEpoch, view.published());
        });
    }

    /**
     * The published banks of the domain holding {@code seqHashes[0..k)} for the largest k, best
     * first: longest k, then smallest bank id ({@link UUID#compareTo}); at most {@code maxCandidates}.
     *
     * @param n how many of {@code seqHashes} make up the request's chain
     * @param mmLineage the request's multimodal lineage, or null for none
     */
    public List<Candidate> lookup(
            String domainId, long[] seqHashes, int n, @Nullable String mmLineage, int maxCandidates) {
        Objects.checkFromIndexSize(0, n, seqHashes.length);
        if (maxCandidates < 0) {
            throw new IllegalArgumentException("maxCandidates must be >= 0, was " + maxCandidates);
        }
        Integer domain = domains.get(domainId);
        if (domain == null || n == 0) {
            return List.of();
        }
        return search.lookup(banks, domain, seqHashes, n, lineages.lookup(mmLineage), maxCandidates);
    }

    /**
     * The bank's slots for blocks {@code [from, to)} of the chain, as far as it holds them
     * contiguously at that epoch now (shorter, possibly empty, if blocks went away since a lookup).
     */
    public int[] slots(UUID bankId, long bankEpoch, long[] seqHashes, int from, int to, @Nullable String mmLineage) {
        Objects.checkFromToIndex(from, to, seqHashes.length);
        Bank bank = banksById.get(bankId);
        if (bank == null) {
            return new int[0];
        }
        return search.slots(bank, bankEpoch, seqHashes, from, to, lineages.lookup(mmLineage));
    }

    /** This thread's lookup counters: lookups, table lookups, fetch rounds; for benchmarks. */
    long[] threadLookupCounters() {
        return search.threadCounters();
    }

    /** How many table slots a lookup of {@code seqHash} reads; for benchmarks. */
    int tableSlotsRead(long seqHash) {
        return table.slotsRead(seqHash);
    }

    /** Whether the bank's visible state is prefix-closed (its lookups binary-search); for tests. */
    boolean prefixClosed(UUID bankId) {
        return require(bankId).view.prefixClosed();
    }

    /** Counters for metrics. Takes the write lock briefly; do not call on a hot path. */
    public IndexStats stats() {
        writeLock.lock();
        try {
            int published = 0;
            long slotBytes = 0;
            for (Bank bank : banksById.values()) {
                published += bank.view.published() ? 1 : 0;
                slotBytes += bank.slotBytes();
            }
            long bytes = table.holderBytes() + table.slotBytes() + slotBytes + 4L * banks.length;
            return new IndexStats(entries, table.size(), banksById.size(), published, bytes, search.retries());
        } finally {
            writeLock.unlock();
        }
    }

    private void applyOne(Bank bank, BlockEvent event) {
        switch (event) {
            case StoredBlock stored -> writer.store(bank, stored);
            case RemovedBlock removed -> writer.remove(bank, removed.seqHash());
        }
    }

    private void removeAll(Bank bank) {
        writer.removeAll(bank);
    }

    /**
     * Runs a batch as pending records, then commits it in the bank's view (one volatile write makes
     * it visible) and settles the records. The commit also happens if the batch fails half way, so
     * the bookkeeping stays consistent; only an internal error can get there, input is checked first.
     */
    private void runBatch(Bank bank, Runnable body, long epoch, boolean published) {
        bank.view = bank.view.beginBatch();
        try {
            body.run();
        } finally {
            bank.view = bank.view.commit(epoch, published, bank.prefixClosed());
            int delta = writer.settle(bank);
            bank.addEntries(delta);
            entries += delta;
            bank.view = bank.view.settled();
        }
    }

    private void setPublished(UUID bankId, boolean published) {
        locked(() -> {
            Bank bank = require(bankId);
            bank.view = bank.view.withPublished(published);
        });
    }

    private int domainIndex(String domainId) {
        Integer known = domains.get(domainId);
        if (known != null) {
            return known;
        }
        Map<String, Integer> grown = new HashMap<>(domains);
        int index = grown.size();
        grown.put(domainId, index);
        domains = Map.copyOf(grown);
        return index;
    }

    private Bank require(UUID bankId) {
        Bank bank = banksById.get(Objects.requireNonNull(bankId, "bankId"));
        if (bank == null) {
            throw new UnknownBankException(bankId);
        }
        return bank;
    }

    private void locked(Runnable action) {
        writeLock.lock();
        try {
            action.run();
        } finally {
            writeLock.unlock();
        }
    }
}
