package io.kvreuse.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The packed, immutable-once-published holder array of one sequence hash: {@code [keyHi, keyLo]}
 * followed by 4-int records {@code [bankWord, slot, position, lineage]} sorted by bank index, the
 * committed record of a bank before its pending one. {@code bankWord} is the bank index with the
 * {@link #PENDING} bit for a record written by a batch not yet purged; a slot of {@link #REMOVED}
 * marks a pending removal. Only the pending bit is ever changed in place (see {@link #settle}).
 */
final class Holders {

    static final int HEADER = 2;
    static final int STRIDE = 4;
    static final int PENDING = 1 << 30;
    static final int BANK_MASK = PENDING - 1;
    static final int REMOVED = -1;
    static final int NO_RECORD = -1;

    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);

    private Holders() {}

    static long key(int[] holders) {
        return ((long) holders[0] << 32) | (holders[1] & 0xFFFF_FFFFL);
    }

    static int count(int[] holders) {
        return (holders.length - HEADER) / STRIDE;
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
        int[] copy = new int[holders.length + STRIDE];
        System.arraycopy(holders, 0, copy, 0, offset(at));
        System.arraycopy(holders, offset(at), copy, offset(at + 1), holders.length - offset(at));
        write(copy, at, bankWord, slot, position, lineage);
        return copy;
    }

    /** A copy with one record replaced. */
    static int[] replace(int[] holders, int record, int bankWord, int slot, int position, int lineage) {
        int[] copy = holders.clone();
        write(copy, record, bankWord, slot, position, lineage);
        return copy;
    }

    /** A copy without the given records ({@code second} may be {@link #NO_RECORD}); null when nothing is left. */
    static int @Nullable [] without(int[] holders, int first, int second) {
        int drop = second == NO_RECORD ? 1 : 2;
        int n = count(holders);
        if (n == drop) {
            return null;
        }
        int[] copy = new int[holders.length - drop * STRIDE];
        copy[0] = holders[0];
        copy[1] = holders[1];
        int to = 0;
        for (int r = 0; r < n; r++) {
            if (r != first && r != second) {
                System.arraycopy(holders, offset(r), copy, offset(to++), STRIDE);
            }
        }
        return copy;
    }

    /** Clears the pending bit in place; safe for concurrent readers, who resolve both forms alike once committed. */
    static void settle(int[] holders, int record) {
        INTS.setRelease(holders, offset(record), bank(holders[offset(record)]));
    }

    private static void write(int[] holders, int record, int bankWord, int slot, int position, int lineage) {
        int at = offset(record);
        holders[at] = bankWord;
        holders[at + 1] = slot;
        holders[at + 2] = position;
        holders[at + 3] = lineage;
    }
}
