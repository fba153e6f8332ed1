package io.kvreuse.index;

/** A block a bank no longer holds; removing a block the bank does not hold changes nothing. */
public record RemovedBlock(long seqHash) implements BlockEvent {}
