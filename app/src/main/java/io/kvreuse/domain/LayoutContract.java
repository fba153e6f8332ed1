package io.kvreuse.domain;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The operator's statement that two engines' KV blocks are byte-compatible (DESIGN §3). Values are
 * already normalised (see {@link ContractDigest}); {@code extra} is sorted by key.
 */
@Schema(description = "A layout contract: everything that must match for two engines to exchange KV blocks")
public record LayoutContract(
        @Schema(description = "Model identifier") String modelId,
        @Schema(description = "Model revision (weights)") String modelRevision,
        @Schema(description = "Tokenizer revision") String tokenizerRevision,
        @Schema(description = "Serving engine, e.g. vllm") String engine,
        @Schema(description = "Serving engine version") String engineVersion,
        @Schema(description = "Model dtype") String dtype,
        @Schema(description = "KV cache dtype") String kvCacheDtype,

        @Schema(description = "KV quantisation scheme, if any") @Nullable
        String kvQuantScheme,

        @Schema(description = "Attention layers") int numLayers,
        @Schema(description = "KV heads") int numKvHeads,
        @Schema(description = "Head dimension") int headDim,
        @Schema(description = "Attention backend") String attentionBackend,
        @Schema(description = "Tokens per KV block") int blockSizeTokens,

        @Schema(description = "How block hashes are computed (engine, hash function, seed)")
        String hashFormat,

        @Schema(description = "FULLY_CONTIGUOUS or LAYER_SEPARATE")
        MemoryLayout memoryLayout,

        @Schema(description = "NHD or HND") KvLayout kvLayout,

        @Schema(description = "Bytes of one block on one rank")
        long bytesPerBlockPerRank,

        @Schema(description = "Tensor-parallel size") int tpSize,
        @Schema(description = "Data-parallel size") int dpSize,
        @Schema(description = "Pipeline-parallel size") int ppSize,
        @Schema(description = "Context-parallel size") int cpSize,

        @Schema(description = "GPU_CUDA_IPC (same host), GPU_MNNVL (multi-node NVLink) or CPU_TP1")
        TransportClass transportClass,

        @Schema(description = "Further contract fields, string to string")
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
