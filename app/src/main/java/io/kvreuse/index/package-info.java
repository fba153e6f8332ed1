/**
 * The in-memory prefix index on the router's hot path: for a request's root-aligned block-hash
 * chain, which published banks of a layout domain hold its longest prefix.
 *
 * <p><b>Layout.</b> One open-addressing table maps each u64 sequence hash to an immutable
 * {@code int[]} holding the key and one 16-byte record per holding bank ({@code bank index, slot,
 * position, lineage id}), sorted by bank. A bank keeps a slot → hash array so a reset or drop finds
 * its blocks without a per-bank hash set. No boxed keys; about 40–60 bytes per (block, bank) entry
 * when no other bank shares the block, far less for shared prefixes.
 *
 * <p><b>Lookup.</b> Take the banks holding {@code h[0]} at position 0 in the domain, then intersect
 * them level by level with the holders of {@code h[i]} at position i (merge or binary search over
 * the sorted records) until none is left; a bank's coverage is the level where it dropped out.
 * Work is bounded by the fan-out of {@code h[0]} plus the live candidates per level, never by all
 * blocks of all banks; the best {@code maxCandidates} are kept by (coverage desc, bank id asc).
 *
 * <p><b>Atomic batches without read locks.</b> Writers serialise on a lock. A batch writes its
 * changes as <em>pending</em> records next to the committed ones (copy-on-write of the affected
 * holder arrays, published with release stores), invisible to readers. It then commits by
 * publishing a new immutable {@code BankView} for the bank (one volatile write), in which pending
 * records supersede committed ones, and settles: drops what they superseded and clears the pending
 * bit. A reader interprets every record of a bank against the view it read <em>before</em> reading
 * those records, and at the end checks that the bank's view still explains them (no settle purged
 * them meanwhile); if not, that one bank is walked again with a fresh view. So each candidate's
 * coverage is that of one committed state of its bank, never half a batch.
 */
@NullMarked
package io.kvreuse.index;

import org.jspecify.annotations.NullMarked;
