package io.kvreuse.domain;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import io.kvreuse.error.InvalidRequestException;
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
record CertifyRequest(
        @NotBlank @Size(max = 256) String modelId,
        @NotBlank @Size(max = 256) String modelRevision,
        @NotBlank @Size(max = 256) String tokenizerRevision,
        @NotBlank @Size(max = 128) String engine,
        @NotBlank @Size(max = 128) String engineVersion,
        @NotBlank @Size(max = 64) String dtype,
        @NotBlank @Size(max = 64) String kvCacheDtype,
        @Nullable @Size(max = 128) String kvQuantScheme,
        @NotNull @Min(1) @Max(1024) Integer numLayers,
        @NotNull @Min(1) @Max(1024) Integer numKvHeads,
        @NotNull @Min(1) @Max(4096) Integer headDim,
        @NotBlank @Size(max = 128) String attentionBackend,
        @NotNull @Min(1) @Max(4096) Integer blockSizeTokens,
        @NotBlank @Size(max = 512) String hashFormat,
        @NotNull LayoutContract.MemoryLayout memoryLayout,
        @NotNull LayoutContract.KvLayout kvLayout,
        @NotNull @Min(1) @Max(1L << 30) Long bytesPerBlockPerRank,
        @NotNull @Min(1) @Max(64) Integer tpSize,
        @NotNull @Min(1) @Max(1024) Integer dpSize,
        @NotNull @Min(1) @Max(1024) Integer ppSize,
        @NotNull @Min(1) @Max(1024) Integer cpSize,
        @NotNull TransportClass transportClass,
        @Nullable @Size(max = 64) Map<@NotBlank @Size(max = 128) String, @NotNull @Size(max = 1024) String> extra,
        @JsonAnySetter @Nullable Map<String, Object> unknownFields) {

    /** The normalised contract; a blank {@code kvQuantScheme} counts as absent. */
    LayoutContract toContract() {
        if (unknownFields != null && !unknownFields.isEmpty()) {
            throw new InvalidRequestException(
                            "unknown-field",
                            "Unknown field",
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
                            "duplicate-extra-key",
                            "Duplicate extra key",
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
