package io.kvreuse.admin;

import io.kvreuse.domain.LayoutContract;
import io.kvreuse.domain.TransportClass;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.text.Normalizer;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.validation.BindingResult;

/**
 * The certify form: the fields and limits of the API's layout contract, with {@code extra} typed
 * as {@code key=value} lines. Values are normalised like the API does (NFC, stripped), so the same
 * contract gets the same domain id whichever way it was certified.
 */
class CertifyForm {

    private @NotBlank @Size(max = 256) String modelId = "";
    private @NotBlank @Size(max = 256) String modelRevision = "";
    private @NotBlank @Size(max = 256) String tokenizerRevision = "";
    private @NotBlank @Size(max = 128) String engine = "";
    private @NotBlank @Size(max = 128) String engineVersion = "";
    private @NotBlank @Size(max = 64) String dtype = "";
    private @NotBlank @Size(max = 64) String kvCacheDtype = "";
    private @Size(max = 128) String kvQuantScheme = "";
    private @NotNull @Min(1) @Max(1024) @Nullable Integer numLayers;
    private @NotNull @Min(1) @Max(1024) @Nullable Integer numKvHeads;
    private @NotNull @Min(1) @Max(4096) @Nullable Integer headDim;
    private @NotBlank @Size(max = 128) String attentionBackend = "";
    private @NotNull @Min(1) @Max(4096) @Nullable Integer blockSizeTokens;
    private @NotBlank @Size(max = 512) String hashFormat = "";
    private @NotNull LayoutContract.@Nullable MemoryLayout memoryLayout = LayoutContract.MemoryLayout.LAYER_SEPARATE;
    private @NotNull LayoutContract.@Nullable KvLayout kvLayout = LayoutContract.KvLayout.NHD;
    private @NotNull @Min(1) @Max(1L << 30) @Nullable Long bytesPerBlockPerRank;
    private @NotNull @Min(1) @Max(64) @Nullable Integer tpSize = 1;
    private @NotNull @Min(1) @Max(1024) @Nullable Integer dpSize = 1;
    private @NotNull @Min(1) @Max(1024) @Nullable Integer ppSize = 1;
    private @NotNull @Min(1) @Max(1024) @Nullable Integer cpSize = 1;
    private @NotNull @Nullable TransportClass transportClass = TransportClass.GPU_CUDA_IPC;
    private @Size(max = 20_000) String extra = "";

    /** The contract, or null with the problems recorded on {@code errors}. */
    @Nullable
    LayoutContract toContract(BindingResult errors) {
        TreeMap<String, String> extras = parseExtra(errors);
        if (errors.hasErrors()) {
            return null;
        }
        String quant = n(kvQuantScheme);
        return new LayoutContract(
                n(modelId),
                n(modelRevision),
                n(tokenizerRevision),
                n(engine),
                n(engineVersion),
                n(dtype),
                n(kvCacheDtype),
                quant.isEmpty() ? null : quant,
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
                extras);
    }

    private TreeMap<String, String> parseExtra(BindingResult errors) {
        TreeMap<String, String> out = new TreeMap<>();
        int lineNo = 0;
        for (String line : extra.split("\\R")) {
            lineNo++;
            if (line.isBlank()) {
                continue;
            }
            int eq = line.indexOf('=');
            String key = eq < 0 ? "" : n(line.substring(0, eq));
            if (key.isEmpty() || key.length() > 128) {
                errors.rejectValue(
                        "extra", "extra.line", "line " + lineNo + ": write key=value (key up to 128 characters)");
                continue;
            }
            String value = n(line.substring(eq + 1));
            if (value.length() > 1024 || out.put(key, value) != null) {
                errors.rejectValue(
                        "extra", "extra.line", "line " + lineNo + ": duplicate key '" + key + "' or value too long");
            }
        }
        if (out.size() > 64) {
            errors.rejectValue("extra", "extra.size", "at most 64 extra entries");
        }
        return out;
    }

    /** As the API normalises (ContractDigest.normalise): NFC, then strip. */
    private static String n(@Nullable String s) {
        return s == null ? "" : Normalizer.normalize(s, Normalizer.Form.NFC).strip();
    }

    // accessors for data binding and the template

    public String getModelId() {
        return modelId;
    }

    public void setModelId(String v) {
        modelId = v;
    }

    public String getModelRevision() {
        return modelRevision;
    }

    public void setModelRevision(String v) {
        modelRevision = v;
    }

    public String getTokenizerRevision() {
        return tokenizerRevision;
    }

    public void setTokenizerRevision(String v) {
        tokenizerRevision = v;
    }

    public String getEngine() {
        return engine;
    }

    public void setEngine(String v) {
        engine = v;
    }

    public String getEngineVersion() {
        return engineVersion;
    }

    public void setEngineVersion(String v) {
        engineVersion = v;
    }

    public String getDtype() {
        return dtype;
    }

    public void setDtype(String v) {
        dtype = v;
    }

    public String getKvCacheDtype() {
        return kvCacheDtype;
    }

    public void setKvCacheDtype(String v) {
        kvCacheDtype = v;
    }

    public String getKvQuantScheme() {
        return kvQuantScheme;
    }

    public void setKvQuantScheme(String v) {
        kvQuantScheme = v;
    }

    public @Nullable Integer getNumLayers() {
        return numLayers;
    }

    public void setNumLayers(@Nullable Integer v) {
        numLayers = v;
    }

    public @Nullable Integer getNumKvHeads() {
        return numKvHeads;
    }

    public void setNumKvHeads(@Nullable Integer v) {
        numKvHeads = v;
    }

    public @Nullable Integer getHeadDim() {
        return headDim;
    }

    public void setHeadDim(@Nullable Integer v) {
        headDim = v;
    }

    public String getAttentionBackend() {
        return attentionBackend;
    }

    public void setAttentionBackend(String v) {
        attentionBackend = v;
    }

    public @Nullable Integer getBlockSizeTokens() {
        return blockSizeTokens;
    }

    public void setBlockSizeTokens(@Nullable Integer v) {
        blockSizeTokens = v;
    }

    public String getHashFormat() {
        return hashFormat;
    }

    public void setHashFormat(String v) {
        hashFormat = v;
    }

    public LayoutContract.@Nullable MemoryLayout getMemoryLayout() {
        return memoryLayout;
    }

    public void setMemoryLayout(LayoutContract.@Nullable MemoryLayout v) {
        memoryLayout = v;
    }

    public LayoutContract.@Nullable KvLayout getKvLayout() {
        return kvLayout;
    }

    public void setKvLayout(LayoutContract.@Nullable KvLayout v) {
        kvLayout = v;
    }

    public @Nullable Long getBytesPerBlockPerRank() {
        return bytesPerBlockPerRank;
    }

    public void setBytesPerBlockPerRank(@Nullable Long v) {
        bytesPerBlockPerRank = v;
    }

    public @Nullable Integer getTpSize() {
        return tpSize;
    }

    public void setTpSize(@Nullable Integer v) {
        tpSize = v;
    }

    public @Nullable Integer getDpSize() {
        return dpSize;
    }

    public void setDpSize(@Nullable Integer v) {
        dpSize = v;
    }

    public @Nullable Integer getPpSize() {
        return ppSize;
    }

    public void setPpSize(@Nullable Integer v) {
        ppSize = v;
    }

    public @Nullable Integer getCpSize() {
        return cpSize;
    }

    public void setCpSize(@Nullable Integer v) {
        cpSize = v;
    }

    public @Nullable TransportClass getTransportClass() {
        return transportClass;
    }

    public void setTransportClass(@Nullable TransportClass v) {
        transportClass = v;
    }

    public String getExtra() {
        return extra;
    }

    public void setExtra(String v) {
        extra = v;
    }
}
