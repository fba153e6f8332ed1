/**
 * The in-memory prefix index on the router's hot path: for a request's root-aligned block-hash
 * chain, which published banks of a layout domain hold its longest prefix.
 *
 * <p><b>Layout.</b> One open-addressing table maps each u64 sequence hash to an immutable
 * {@code int[]} holding the key and one 16-byte record per holding bank ({@code bank index, slot,
 * position, lineage id}), sorted by bank. Beside each table slot is a one-byte fingerprint of its
 * key, so a probe dereferences only arrays whose fingerprint matches (its own, or 1 in 255 another
 * key's); the table runs at 0.6–0.75 load (a capacity that is not a power of two). A bank keeps a
 * slot → hash array so a reset or drop finds its blocks without a per-bank hash set, and 3 bytes
 * per slot of block-tree bookkeeping (below). No boxed keys; about 58–61 bytes per (block, bank)
 * entry when no other bank shares the block, far less for shared prefixes. An array of four or more records (a shared prefix's block) ends
 * with a summary: a bit per bank whose one record is committed, live, of no lineage and at the
 * array's common position, so a lookup decides those banks with a bit test instead of a record merge.
 *
 * <p><b>Prefix closure.</b> A bank's block is anchored when it is a root or its parent (by the
 * parent hash it was stored with) is held in the same bank at the position before it, with no
 * multimodal lineage or the child's. The writer keeps, per bank, which blocks are anchored:
 * removing a parent turns its held children into orphans waiting for its hash, and storing it again
 * anchors them again. A bank with no orphan is prefix-closed, and each committed view says whether
 * it is. Because a sequence hash names its whole prefix, a prefix-closed bank that serves
 * {@code h[i]} at position i serves all of {@code h[0..i]}: coverage is monotone along the chain.
 * (The index relies on that: for a chain whose {@code h[i - 1]} is not the parent hash {@code h[i]}
 * was stored with, which chained hashes rule out, a prefix-closed bank may be credited with more
 * than a level-by-level walk would give.)
 *
 * <p><b>Lookup.</b> Take the banks serving {@code h[0]} at position 0 in the domain. The
 * prefix-closed ones are searched together: a round probes up to 3 levels spread over each group's
 * open gap (all groups' probes fetched at once, so their cache misses overlap), splits the group by
 * how many of its probes each bank serves (a binary search over the probes), and continues in the
 * narrower gaps; the first round is fetched together with {@code h[0]} and also probes
 * {@code h[n-1]}, so a bank holding the whole chain is decided at once. A long hit takes about
 * log4(n) rounds, and the work is (distinct coverages) × log(n) probes. When the candidates' bank
 * indexes fit one 64-bank window (a domain of up to 64 banks), a group is one {@code long} of bank
 * bits and a probe splits it with bit operations: a shared block's summary at that level decides
 * the group with one AND, and only the banks it leaves open are looked up in the records, so a
 * probe costs O(records in the window); candidates spread wider are merged with each holder array
 * (O(candidates) per probe), with the same decisions. The cost is the table's cold cache misses (a slot's fingerprint and reference,
 * then the holder array behind it): every probe's fingerprint line and slot are loaded together,
 * the arrays whose fingerprints match touched in one pass (a hash nobody holds touches none), and
 * the chain's own lines read at once when {@code h[0]} is held. A bank that
 * is not prefix-closed right now (an orphan somewhere) is walked level by level, so answers never
 * depend on closure, only their speed does. The best {@code maxCandidates} are kept by (coverage
 * desc, bank id asc); per-lookup scratch is per thread, so a lookup allocates only its answer.
 *
 * <p><b>Atomic batches without read locks.</b> Writers serialise on a lock. A batch writes its
 * changes as <em>pending</em> records next to the committed ones (copy-on-write of the affected
 * holder arrays, published with release stores), invisible to readers. It then commits by
 * publishing a new immutable {@code BankView} for the bank (one volatile write), in which pending
 * records supersede committed ones, and settles: drops what they superseded and clears the pending
 * bit. A reader interprets every record of a bank against the view it read <em>before</em> reading
 * those records, and at the end checks that the bank's view still explains them (no settle purged
 * them meanwhile); if not, that one bank is searched again with a fresh view. So each candidate's
 * coverage is that of one committed state of its bank, never half a batch.
 */
@NullMarked
package io.kvreuse.index;

import org.jspecify.annotations.NullMarked;
