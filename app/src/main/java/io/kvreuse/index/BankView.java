package io.kvreuse.index;

/**
 * What a reader needs to interpret a bank's records, published as one immutable object per state
 * change. {@code committed} is the last batch whose effects are visible; {@code inflight} the batch
 * being applied ({@code == committed} when idle). While {@code settling}, the pending records
 * belong to the committed batch and supersede the committed ones; otherwise they are invisible.
 * {@code purges} counts commits: a commit is followed by a purge that physically drops superseded
 * records, which a reader holding an older view can no longer interpret, so it must retry.
 * {@code prefixClosed} says whether the visible state is prefix-closed (every held block anchored
 * to its parent, see {@link Bank}), so that a reader may binary-search the bank's coverage.
 */
record BankView(
        long epoch,
        long committed,
        long inflight,
        boolean published,
        boolean settling,
        long purges,
        boolean prefixClosed) {

    static BankView initial(long epoch) {
        return new BankView(epoch, 0, 0, false, false, 0, true);
    }

    BankView beginBatch() {
        return new BankView(epoch, committed, committed + 1, published, false, purges, prefixClosed);
    }

    BankView commit(long newEpoch, boolean newPublished, boolean newPrefixClosed) {
        return new BankView(newEpoch, inflight, inflight, newPublished, true, purges + 1, newPrefixClosed);
    }

    BankView settled() {
        return new BankView(epoch, committed, inflight, published, false, purges, prefixClosed);
    }

    BankView withPublished(boolean newPublished) {
        return new BankView(epoch, committed, inflight, newPublished, settling, purges, prefixClosed);
    }

    /**
     * Whether records read after {@code this} was taken and before {@code now} was taken were
     * interpreted correctly: no purge ran, and, if pending records were read as committed, no new
     * batch has started marking records pending since.
     */
    boolean stillExplains(BankView now) {
        return now.purges == purges && (!settling || now.inflight == committed);
    }
}
