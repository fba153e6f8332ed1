package io.kvreuse.index;

/** One inventory change of a retained bank, applied in batch order by {@link PrefixIndex#apply}. */
public sealed interface BlockEvent permits StoredBlock, RemovedBlock {

    /** The u64 sequence hash (as its two's-complement bits). */
    long seqHash();
}
