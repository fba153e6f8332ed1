package io.kvreuse.index;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** The obviously correct, brute-force model the index is checked against: maps and full scans. */
final class ReferenceIndex {

    record Block(
            long hash,
            @Nullable Long parent,
            int position,
            int slot,
            @Nullable String lineage) {}

    static final class Bank {
        final UUID id;
        final String domain;
        final int capacity;
        long epoch;
        boolean published;
        final Map<Long, Block> byHash = new LinkedHashMap<>();
        final Map<Integer, Long> bySlot = new HashMap<>();

        Bank(UUID id, String domain, int capacity, long epoch) {
            this.id = id;
            this.domain = domain;
            this.capacity = capacity;
            this.epoch = epoch;
        }

        void store(StoredBlock block) {
            Long inSlot = bySlot.get(block.slot());
            if (inSlot != null && inSlot != block.seqHash()) {
                remove(inSlot);
            }
            Block old = byHash.get(block.seqHash());
            if (old != null) {
                bySlot.remove(old.slot());
            }
            byHash.put(
                    block.seqHash(),
                    new Block(block.seqHash(), block.parentHash(), block.position(), block.slot(), block.mmLineage()));
            bySlot.put(block.slot(), block.seqHash());
        }

        void remove(long hash) {
            Block old = byHash.remove(hash);
            if (old != null) {
                bySlot.remove(old.slot());
            }
        }

        /**
         * Whether every held block is a root or has its parent held at the position before it, with
         * no lineage or the child's.
         */
        boolean prefixClosed() {
            for (Block block : byHash.values()) {
                if (block.parent() == null) {
                    continue;
                }
                Block parent = byHash.get(block.parent());
                if (parent == null
                        || parent.position() + 1 != block.position()
                        || (parent.lineage() != null && !parent.lineage().equals(block.lineage()))) {
                    return false;
                }
            }
            return true;
        }

        int coverage(long[] h, int n, @Nullable String lineage) {
            int k = 0;
            while (k < n) {
                Block block = byHash.get(h[k]);
                if (block == null
                        || block.position() != k
                        || (block.lineage() != null && !block.lineage().equals(lineage))) {
                    break;
                }
                k++;
            }
            return k;
        }
    }

    final Map<UUID, Bank> banks = new LinkedHashMap<>();

    void register(UUID id, String domain, long epoch, int capacity) {
        banks.put(id, new Bank(id, domain, capacity, epoch));
    }

    boolean apply(UUID id, long epoch, List<? extends BlockEvent> batch) {
        Bank bank = Objects.requireNonNull(banks.get(id));
        if (bank.epoch != epoch) {
            return false;
        }
        for (BlockEvent event : batch) {
            switch (event) {
                case StoredBlock stored -> bank.store(stored);
                case RemovedBlock removed -> bank.remove(removed.seqHash());
            }
        }
        return true;
    }

    void reset(UUID id, long newEpoch) {
        Bank bank = banks.get(id);
        bank.byHash.clear();
        bank.bySlot.clear();
        bank.epoch = newEpoch;
    }

    List<Candidate> lookup(String domain, long[] h, int n, @Nullable String lineage, int max) {
        List<Candidate> all = new ArrayList<>();
        for (Bank bank : banks.values()) {
            if (bank.published && bank.domain.equals(domain)) {
                int k = bank.coverage(h, n, lineage);
                if (k > 0) {
                    all.add(new Candidate(bank.id, bank.epoch, k));
                }
            }
        }
        all.sort(Comparator.comparingInt(Candidate::coveredBlocks).reversed().thenComparing(Candidate::bankId));
        return all.subList(0, Math.min(max, all.size()));
    }

    int[] slots(UUID id, long[] h, int from, int to) {
        Bank bank = banks.get(id);
        int[] slots = new int[to - from];
        for (int i = from; i < to; i++) {
            slots[i - from] = bank.byHash.get(h[i]).slot();
        }
        return slots;
    }

    long entries() {
        return banks.values().stream().mapToLong(b -> b.byHash.size()).sum();
    }
}
