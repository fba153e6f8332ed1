package io.kvreuse.sim;

import java.util.List;

/**
 * A deterministic multi-turn conversation as serving engines see it. Its token stream is user turn,
 * reply, user turn, reply, …; the prompt of a turn is everything before it plus the new user tokens,
 * and after the turn's decode the context also holds the generated tokens. Only full blocks of
 * {@code blockTokens} tokens are sealed; each is named by a sequence hash chained from the root over
 * its token ids (a stand-in for the engines' real block hashing), so two turns of one conversation
 * share their common prefix of hashes and the same seed always gives the same prompts and hashes.
 */
public final class Conversation {

    /** One turn: tokens the user adds, then tokens the decode engine generates. */
    public record Turn(int userTokens, int generatedTokens) {
        public Turn {
            if (userTokens < 1 || generatedTokens < 0) {
                throw new IllegalArgumentException("a turn adds at least one user token: " + userTokens);
            }
        }
    }

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long ROOT = 0x6b7672657573652eL;
    private static final int VOCABULARY = 128_256;

    private final long seed;
    private final int blockTokens;
    private final List<Turn> turns;

    public Conversation(long seed, int blockTokens, List<Turn> turns) {
        if (blockTokens < 1 || turns.isEmpty()) {
            throw new IllegalArgumentException("a conversation needs a block size and at least one turn");
        }
        this.seed = seed;
        this.blockTokens = blockTokens;
        this.turns = List.copyOf(turns);
    }

    /**
     * The serving smoke: three turns adding 20, 20 and 41 user tokens, 172 generated per reply, in
     * 16-token blocks. Prompts are 20, 212 and 425 tokens (657 in all); the contexts after turns one
     * and two are exactly 12 and 24 blocks, so a donor can serve 192 and then 384 of them.
     */
    public static Conversation servingSmoke(long seed) {
        return new Conversation(seed, 16, List.of(new Turn(20, 172), new Turn(20, 172), new Turn(41, 172)));
    }

    public int turnCount() {
        return turns.size();
    }

    public int blockTokens() {
        return blockTokens;
    }

    /** Tokens of the prompt of turn {@code turn} (0-based): the context so far plus the new user tokens. */
    public int promptTokens(int turn) {
        return contextBefore(turn) + turns.get(turn).userTokens();
    }

    /** Tokens held after the decode of turn {@code turn}: its prompt plus the generated reply. */
    public int contextTokens(int turn) {
        return promptTokens(turn) + turns.get(turn).generatedTokens();
    }

    /** Sequence hashes of the full blocks of the prompt of turn {@code turn}. */
    public long[] promptBlocks(int turn) {
        return blockHashes(promptTokens(turn));
    }

    /** Sequence hashes of the full blocks of the context after the decode of turn {@code turn}. */
    public long[] contextBlocks(int turn) {
        return blockHashes(contextTokens(turn));
    }

    /** Sequence hashes of the full blocks among the first {@code tokens} tokens, chained from the root. */
    public long[] blockHashes(int tokens) {
        long[] hashes = new long[tokens / blockTokens];
        long parent = ROOT;
        for (int b = 0; b < hashes.length; b++) {
            long h = parent;
            for (int t = b * blockTokens; t < (b + 1) * blockTokens; t++) {
                h = mix(h ^ token(t));
            }
            hashes[b] = h;
            parent = h;
        }
        return hashes;
    }

    /** The token id at position {@code position} of the conversation's stream. */
    public int token(int position) {
        return (int) Long.remainderUnsigned(mix(seed + GOLDEN * (position + 1L)), VOCABULARY);
    }

    private int contextBefore(int turn) {
        return turn == 0 ? 0 : contextTokens(turn - 1);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
