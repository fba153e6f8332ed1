package io.kvreuse.benchmarks;

/** Precomputed 256-block request chains of one kind, cycled through by a benchmark. */
final class Queries {

    static final int CHAIN = 256;

    enum Kind {
        /** A held conversation, all 256 blocks held by one bank after a prefix held by up to 64. */
        FULL_HIT,
        /** A held conversation cut at a random point, continued by new turns. */
        PARTIAL_HIT,
        /** A new conversation on a system prompt: all banks holding the prompt are candidates. */
        PROMPT_ONLY,
        /** A root nobody holds. */
        MISS
    }

    private final long[][] chains;
    private int next;

    private Queries(long[][] chains) {
        this.chains = chains;
    }

    long[] next() {
        long[] chain = chains[next];
        next = (next + 1) & (chains.length - 1);
        return chain;
    }

    static Queries of(Fleet fleet, Kind... mix) {
        long[][] chains = new long[4096][];
        for (int q = 0; q < chains.length; q++) {
            chains[q] = chain(fleet, mix[q % mix.length]);
        }
        return new Queries(chains);
    }

    private static long[] chain(Fleet fleet, Kind kind) {
        return switch (kind) {
            case FULL_HIT -> {
                long[] path;
                do {
                    path = fleet.heldPaths.get(fleet.nextInt(0, fleet.heldPaths.size()));
                } while (path.length < CHAIN);
                yield java.util.Arrays.copyOf(path, CHAIN);
            }
            case PARTIAL_HIT -> {
                long[] path = fleet.heldPaths.get(fleet.nextInt(0, fleet.heldPaths.size()));
                int cut = fleet.nextInt(1, Math.min(CHAIN, path.length));
                yield fleet.extend(java.util.Arrays.copyOf(path, cut), CHAIN - cut);
            }
            case PROMPT_ONLY -> {
                long[] prompt = fleet.prompts[fleet.nextInt(0, 3)];
                yield fleet.extend(prompt, CHAIN - prompt.length);
            }
            case MISS -> fleet.extend(new long[0], CHAIN);
        };
    }
}
