package io.kvreuse.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The packed, immutable-once-published holder array of one sequence hash: {@code [keyHi, keyLo]}
 * followed by 4-int records {@code [bankWord, slot, position, lineage]} sorted by bank index, the
 * committed record of a bank before its pending one. {@code bankWord} is the bank index with the
 * {@link #PENDING} bit for a record written by a batch not yet purged; a slot of {@link #REMOVED}
 * marks a pending removal. Only the pending bit is ever changed in place (see {@link #settle}).
 *
 * <p>An array of at least {@link #SUMMARY_MIN} records (a block many banks share, like a system
 * prompt's) ends with a summary that lets a lookup decide most of its banks without reading their
 * records: {@code [position, base, bit words..., length]}, its length {@code ≡ 2 (mod 4)} and last,
 * so that {@code (length - HEADER) % STRIDE != 0} tells it is there. Bit {@code b - base} is set
 * only if bank {@code b}'s one record is committed, live, of no lineage and at {@code position}:
 * such a bank serves the hash at that position for any view of it. Bits are set when the array is
 * built and when {@link #settle} commits a record in place, and never cleared in place (a record
 * that stops qualifying is replaced in a new array), so a reader may trust a set bit and reads a
 * clear one as "look at the records". No summary when the banks spread over more bit words than
 * there are records, so it costs at most a third of the records' size.
 */
final class Holders {

    static final int HEADER = 2;
    static final int STRIDE = 4;
    static final int PENDING = 1 << 30;
    static final int BANK_MASK = PENDING - 1;
    static final int REMOVED = -1;
    static final int NO_RECORD = -1;
    /** Arrays of at least this many records carry a summary. */
    static final int SUMMARY_MIN = 4;

    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    private Holders() {}

    static long key(int[] holders) {
        return ((long) holders[0] << 32) | (holders[1] & 0xFFFF_FFFFL);
    }

    static int count(int[] holders) {
        int ints = holders.length - HEADER;
        return (ints & (STRIDE - 1)) == 0 ? ints / STRIDE : (ints - holders[holders.length - 1]) / STRIDE;
    }

    /** Where the summary starts (its position word), or -1 if the array has none. */
    static int summary(int[] holders) {
        int ints = holders.length - HEADER;
        return (ints & (STRIDE - 1)) == 0 ? -1 : holders.length - holders[holders.length - 1];
    }

    /** How many bit words the summary has (with the array's summary). */
    static int summaryWords(int[] holders) {
        return holders[holders.length - 1] - 3;
    }

    /** How many bits the summary starting at {@code summary} has set. */
    static int summarizedCount(int[] holders, int summary) {
        int set = 0;
        for (int w = summary + 2; w < holders.length - 1; w++) {
            set += Integer.bitCount(holders[w]);
        }
        return set;
    }

    /** Whether the summary starting at {@code summary} has the bit of {@code bank} set. */
    static boolean summarized(int[] holders, int summary, int bank) {
        int bit = bank - holders[summary + 1];
        int word = bit >>> 5;
        return bit >= 0 && word < holders[holders.length - 1] - 3 && (holders[summary + 2 + word] & (1 << bit)) != 0;
    }

    /** The summary's bit words as one long, for a summary of at most 2 words. */
    static long summaryBits(int[] holders, int summary) {
        long bits = holders[summary + 2] & 0xFFFF_FFFFL;
        return summaryWords(holders) == 2 ? bits | ((long) holders[summary + 3] << 32) : bits;
    }

    /**
     * The summary's bits of banks {@code from..from + 63} as one long (bit {@code b - from} for bank
     * {@code b}), for the summary starting at {@code summary}.
     */
    static long summaryWindow(int[] holders, int summary, int from) {
        int shift = holders[summary + 1] - from; // where the summary's bit 0 falls in the window
        int words = summaryWords(holders);
        long bits = 0;
        for (int w = Math.max(0, -shift >> 5); w < words; w++) {
            int at = shift + 32 * w;
            if (at >= 64) {
                break;
            }
            long word = holders[summary + 2 + w] & 0xFFFF_FFFFL;
            bits |= at >= 0 ? word << at : word >>> -at;
        }
        return bits;
    }

    static int offset(int record) {
        return HEADER + record * STRIDE;
    }

    /** Acquire-reads the bank word so that a reader seeing a settled record also sees the view change before it. */
    static int bankWord(int[] holders, int record) {
        return (int) INTS.getAcquire(holders, offset(record));
    }

    static int bank(int bankWord) {
        return bankWord & BANK_MASK;
    }

    static boolean pending(int bankWord) {
        return (bankWord & PENDING) != 0;
    }

    static int slot(int[] holders, int record) {
        return holders[offset(record) + 1];
    }

    static int position(int[] holders, int record) {
        return holders[offset(record) + 2];
    }

    static int lineage(int[] holders, int record) {
        return holders[offset(record) + 3];
    }

    /** The first record index whose bank is {@code >= bank}, or {@link #count} if none. */
    static int firstAtOrAfter(int[] holders, int bank) {
        int lo = 0;
        int hi = count(holders);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (bank(holders[offset(mid)]) < bank) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The committed record of {@code bank} (no pending bit), or {@link #NO_RECORD}. */
    static int committed(int[] holders, int bank) {
        int r = firstAtOrAfter(holders, bank);
        return r < count(holders) && holders[offset(r)] == bank ? r : NO_RECORD;
    }

    /** The pending record of {@code bank}, or {@link #NO_RECORD}. */
    static int pendingRecord(int[] holders, int bank) {
        int r = firstAtOrAfter(holders, bank);
        int n = count(holders);
        for (; r < n && bank(holders[offset(r)]) == bank; r++) {
            if (pending(holders[offset(r)])) {
                return r;
            }
        }
        return NO_RECORD;
    }

    static int[] single(long key, int bankWord, int slot, int position, int lineage) {
        int[] holders = new int[HEADER + STRIDE];
        holders[0] = (int) (key >>> 32);
        holders[1] = (int) key;
        write(holders, 0, bankWord, slot, position, lineage);
        return holders;
    }

    /** A copy with the record inserted at its sorted place (after any committed record of the same bank). */
    static int[] insert(int[] holders, int bankWord, int slot, int position, int lineage) {
        int bank = bank(bankWord);
        int at = firstAtOrAfter(holders, bank);
        int n = count(holders);
        while (at < n && bank(holders[offset(at)]) == bank && !pending(holders[offset(at)])) {
            at++;
        }
        int[] copy = new int[offset(n + 1)];
        System.arraycopy(holders, 0, copy, 0, offset(at));
        System.arraycopy(holders, offset(at), copy, offset(at + 1), offset(n) - offset(at));
        write(copy, at, bankWord, slot, position, lineage);
        return summarize(copy);
    }

    /** A copy with one record replaced. */
    static int[] replace(int[] holders, int record, int bankWord, int slot, int position, int lineage) {
        int[] copy = Arrays.copyOf(holders, offset(count(holders)));
        write(copy, record, bankWord, slot, position, lineage);
        return summarize(copy);
    }

    /** A copy without the given records ({@code second} may be {@link #NO_RECORD}); null when nothing is left. */
    static int @Nullable [] without(int[] holders, int first, int second) {
        int drop = second == NO_RECORD ? 1 : 2;
        int n = count(holders);
        if (n == drop) {
            return null;
        }
        int[] copy = new int[offset(n - drop)];
        copy[0] = holders[0];
        copy[1] = holders[1];
        int to = 0;
        for (int r = 0; r < n; r++) {
            if (r != first && r != second) {
                System.arraycopy(holders, offset(r), copy, offset(to++), STRIDE);
            }
        }
        return summarize(copy);
    }

    /**
     * Clears the pending bit in place, then sets the record's summary bit if it now qualifies; safe
     * for concurrent readers, who resolve both forms alike once committed.
     */
    static void settle(int[] holders, int record) {
        int bank = bank(holders[offset(record)]);
        INTS.setRelease(holders, offset(record), bank);
        int summary = summary(holders);
        if (summary >= 0 && qualifies(holders, record, count(holders), holders[summary])) {
            int bit = bank - holders[summary + 1];
            int at = summary + 2 + (bit >>> 5);
            INTS.setRelease(holders, at, holders[at] | (1 << bit));
        }
    }

    /** {@code plain} (records only) with a summary appended if it has enough records close enough together. */
    private static int[] summarize(int[] plain) {
        int n = count(plain);
        if (n < SUMMARY_MIN) {
            return plain;
        }
        int base = bank(plain[offset(0)]) & ~31;
        int words = ((bank(plain[offset(n - 1)]) - base) >>> 5) + 1;
        if (words > n) {
            return plain;
        }
        int length = 3 + words;
        length += (2 - length) & (STRIDE - 1);
        int[] out = Arrays.copyOf(plain, plain.length + length);
        int summary = plain.length;
        int position = -1;
        for (int r = 0; r < n && position < 0; r++) {
            if (slot(plain, r) != REMOVED) {
                position = position(plain, r);
            }
        }
        out[summary] = position;
        out[summary + 1] = base;
        out[out.length - 1] = length;
        for (int r = 0; r < n; r++) {
            if (qualifies(out, r, n, position)) {
                int bit = bank(out[offset(r)]) - base;
                out[summary + 2 + (bit >>> 5)] |= 1 << bit;
            }
        }
        return out;
    }

    /** Whether record {@code r} is its bank's only record, committed, live, of no lineage and at {@code position}. */
    private static boolean qualifies(int[] holders, int r, int count, int position) {
        int word = holders[offset(r)];
        return !pending(word)
                && (r + 1 == count || bank(holders[offset(r + 1)]) != word)
                && (r == 0 || bank(holders[offset(r - 1)]) != word)
                && slot(holders, r) != REMOVED
                && lineage(holders, r) == LineageIds.NONE
                && position(holders, r) == position;
    }

    private static void write(int[] holders, int record, int bankWord, int slot, int position, int lineage) {
        int at = offset(record);
        holders[at] = bankWord;
        holders[at + 1] = slot;
        holders[at + 2] = position;
        holders[at + 3] = lineage;
    }

    /**
     * The record of {@code bank} (searched from record {@code from}) that the view makes current, if
     * it is live, at {@code position}, and may serve {@code lineage}; else {@link Holders#NO_RECORD}.
     */
    static int serving(int[] holders, int from, int bank, BankView view, int position, int lineage) {
        int committed = NO_RECORD;
        int pending = NO_RECORD;
        int count = Holders.count(holders);
        for (int r = from; r < count; r++) {
            int word = Holders.bankWord(holders, r);
            int b = Holders.bank(word);
            if (b > bank) {
                break;
            }
            if (b == bank) {
                if (Holders.pending(word)) {
                    pending = r;
                } else {
                    committed = r;
                }
            }
        }
        int record = view.settling() && pending != NO_RECORD ? pending : committed;
        if (record == NO_RECORD
                || Holders.slot(holders, record) == Holders.REMOVED
                || Holders.position(holders, record) != position) {
            return NO_RECORD;
        }
        int blockLineage = Holders.lineage(holders, record);
        return blockLineage == LineageIds.NONE || blockLineage == lineage ? record : NO_RECORD;
    }
}
