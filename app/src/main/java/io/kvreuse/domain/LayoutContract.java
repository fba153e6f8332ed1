package io.kvreuse.domain;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The operator's statement that two engines' KV blocks are byte-compatible (DESIGN §3). Values are
 * already normalised (see {@link ContractDigest}); {@code extra} is sorted by key.
 */
public record LayoutContract(
        String modelId,
        String modelRevision,
        String tokenizerRevision,
        String engine,
        String engineVersion,
        String dtype,
        String kvCacheDtype,
        @Nullable String kvQuantScheme,
        int numLayers,
        int numKvHeads,
        int headDim,
        String attentionBackend,
        int blockSizeTokens,
        String hashFormat,
        MemoryLayout memoryLayout,
        KvLayout kvLayout,
        long bytesPerBlockPerRank,
        int tpSize,
        int dpSize,
        int ppSize,
        int cpSize,
        TransportClass transportClass,
        SortedMap<String, String> extra) {

    public LayoutContract {
        extra = Collections.unmodifiableSortedMap(new TreeMap<>(extra == null ? Map.of() : extra));
    }

    /** The value of an {@code extra} entry, or null. */
    public @Nullable String extra(String key) {
        return extra.get(key);
    }

    /** How a layer's blocks sit in memory. */
    public enum MemoryLayout {
        FULLY_CONTIGUOUS,
        LAYER_SEPARATE
    }

    /** The order of the token and head dimensions inside a block. */
    public enum KvLayout {
        NHD,
        HND
    }
}
