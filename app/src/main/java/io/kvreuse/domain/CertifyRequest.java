package io.kvreuse.domain;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * A layout contract as posted. Unknown fields are refused ({@code unknown-field}): a misspelt field
 * silently dropped would certify a different contract than the operator meant.
 */
@Schema(description = "A layout contract to certify; the same contract again returns the same domain")
record CertifyRequest(
        @Schema(description = "Model identifier") @NotBlank @Size(max = 256)
        String modelId,

        @Schema(description = "Model revision (weights)") @NotBlank @Size(max = 256)
        String modelRevision,

        @Schema(description = "Tokenizer revision") @NotBlank @Size(max = 256)
        String tokenizerRevision,

        @Schema(description = "Serving engine, e.g. vllm") @NotBlank @Size(max = 128)
        String engine,

        @Schema(description = "Serving engine version") @NotBlank @Size(max = 128)
        String engineVersion,

        @Schema(description = "Model dtype") @NotBlank @Size(max = 64)
        String dtype,

        @Schema(description = "KV cache dtype") @NotBlank @Size(max = 64)
        String kvCacheDtype,

        @Schema(description = "KV quantisation scheme, if any") @Nullable @Size(max = 128)
        String kvQuantScheme,

        @Schema(description = "Attention layers") @NotNull @Min(1) @Max(1024)
        Integer numLayers,

        @Schema(description = "KV heads") @NotNull @Min(1) @Max(1024)
        Integer numKvHeads,

        @Schema(description = "Head dimension") @NotNull @Min(1) @Max(4096)
        Integer headDim,

        @Schema(description = "Attention backend") @NotBlank @Size(max = 128)
        String attentionBackend,

        @Schema(description = "Tokens per KV block") @NotNull @Min(1) @Max(4096)
        Integer blockSizeTokens,

        @Schema(description = "How block hashes are computed (engine, hash function, seed)") @NotBlank @Size(max = 512)
        String hashFormat,

        @Schema(description = "FULLY_CONTIGUOUS or LAYER_SEPARATE") @NotNull
        LayoutContract.MemoryLayout memoryLayout,

        @Schema(description = "NHD or HND") @NotNull LayoutContract.KvLayout kvLayout,

        @Schema(description = "Bytes of one block on one rank") @NotNull @Min(1) @Max(1L << 30)
        Long bytesPerBlockPerRank,

        @Schema(description = "Tensor-parallel size") @NotNull @Min(1) @Max(64)
        Integer tpSize,

        @Schema(description = "Data-parallel size") @NotNull @Min(1) @Max(1024)
        Integer dpSize,

        @Schema(description = "Pipeline-parallel size") @NotNull @Min(1) @Max(1024)
        Integer ppSize,

        @Schema(description = "Context-parallel size") @NotNull @Min(1) @Max(1024)
        Integer cpSize,

        @Schema(description = "GPU_CUDA_IPC (same host), GPU_MNNVL (multi-node NVLink) or CPU_TP1") @NotNull
        TransportClass transportClass,

        @Schema(description = "Further contract fields, string to string (at most 64)") @Nullable @Size(max = 64)
        Map<@NotBlank @Size(max = 128) String, @NotNull @Size(max = 1024) String> extra,

        @Schema(hidden = true) @JsonAnySetter @Nullable Map<String, Object> unknownFields) {

    /** The normalised contract; a blank {@code kvQuantScheme} counts as absent. */
    LayoutContract toContract() {
        if (unknownFields != null && !unknownFields.isEmpty()) {
            throw new InvalidRequestException(
                            ProblemType.UNKNOWN_FIELD,
                            "a layout contract has no field(s) " + new TreeMap<>(unknownFields).keySet())
                    .with("fields", List.copyOf(new TreeMap<>(unknownFields).keySet()));
        }
        String quant = kvQuantScheme == null ? null : ContractDigest.normalise(kvQuantScheme);
        return new LayoutContract(
                n(modelId),
                n(modelRevision),
                n(tokenizerRevision),
                n(engine),
                n(engineVersion),
                n(dtype),
                n(kvCacheDtype),
                quant == null || quant.isEmpty() ? null : quant,
                numLayers,
                numKvHeads,
                headDim,
                n(attentionBackend),
                blockSizeTokens,
                n(hashFormat),
                memoryLayout,
                kvLayout,
                bytesPerBlockPerRank,
                tpSize,
                dpSize,
                ppSize,
                cpSize,
                transportClass,
                normalisedExtra());
    }

    private TreeMap<String, String> normalisedExtra() {
        TreeMap<String, String> out = new TreeMap<>();
        if (extra != null) {
            extra.forEach((k, v) -> {
                if (out.put(n(k), n(v)) != null) {
                    throw new InvalidRequestException(
                            ProblemType.DUPLICATE_EXTRA_KEY,
                            "extra keys '" + n(k) + "' collide once whitespace and Unicode form are normalised");
                }
            });
        }
        return out;
    }

    private static String n(String s) {
        return ContractDigest.normalise(s);
    }
}
