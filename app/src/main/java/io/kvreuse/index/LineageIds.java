package io.kvreuse.index;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Interns multimodal lineage digests as ints so holder records stay primitive. Id 0 is NONE; ids
 * are never reused, so a reader holding a stale id can only miss, never match a different lineage.
 * Reference counts (writer only) drop a digest once no record uses it.
 */
final class LineageIds {

    static final int NONE = 0;
    /** Given to a lineage no block carries: it matches no record with a lineage. */
    static final int UNKNOWN = -1;

    private final ConcurrentHashMap<String, Integer> ids = new ConcurrentHashMap<>();
    private final Map<Integer, String> digests = new HashMap<>();
    private final Map<Integer, int[]> references = new HashMap<>();
    private int next = 1;

    int lookup(@Nullable String lineage) {
        if (lineage == null) {
            return NONE;
        }
        Integer id = ids.get(lineage);
        return id == null ? UNKNOWN : id;
    }

    int acquire(@Nullable String lineage) {
        if (lineage == null) {
            return NONE;
        }
        Integer id = ids.get(lineage);
        if (id == null) {
            if (next == Integer.MAX_VALUE) {
                throw new IllegalStateException("lineage ids exhausted");
            }
            id = next++;
            ids.put(lineage, id);
            digests.put(id, lineage);
            references.put(id, new int[1]);
        }
        references.get(id)[0]++;
        return id;
    }

    void release(int id) {
        if (id == NONE) {
            return;
        }
        int[] count = references.get(id);
        if (--count[0] == 0) {
            references.remove(id);
            ids.remove(digests.remove(id));
        }
    }

    int size() {
        return ids.size();
    }
}
