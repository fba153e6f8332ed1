package io.kvreuse.testkit;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Layout contracts as an operator certifies them, written out once: Llama-3.1-8B-Instruct served
 * by vLLM 0.11.0 at TP 2 in bfloat16, 16-token blocks, 1 MiB per block per rank, CUDA IPC. Every
 * call answers a fresh, mutable map.
 */
public final class SampleContracts {

    private SampleContracts() {}

    /** The Llama-3.1-8B TP-2 contract as certified in production. */
    public static Map<String, Object> llamaTp2() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("modelId", "meta-llama/Llama-3.1-8B-Instruct");
        c.put("modelRevision", "0e9e39f249a16976918f6564b8830bc894c89659");
        c.put("tokenizerRevision", "0e9e39f249a16976918f6564b8830bc894c89659");
        c.put("engine", "vllm");
        c.put("engineVersion", "0.11.0");
        c.put("dtype", "bfloat16");
        c.put("kvCacheDtype", "bfloat16");
        c.put("numLayers", 32);
        c.put("numKvHeads", 8);
        c.put("headDim", 128);
        c.put("attentionBackend", "FLASH_ATTN");
        c.put("blockSizeTokens", 16);
        c.put("hashFormat", "sha256-cbor-64:seed=0");
        c.put("memoryLayout", "LAYER_SEPARATE");
        c.put("kvLayout", "NHD");
        c.put("bytesPerBlockPerRank", 1048576);
        c.put("tpSize", 2);
        c.put("dpSize", 1);
        c.put("ppSize", 1);
        c.put("cpSize", 1);
        c.put("transportClass", "GPU_CUDA_IPC");
        return c;
    }

    /**
     * The sample contract under a model id nobody else uses ({@code <prefix>-<uuid>}), so each caller
     * certifies a domain of its own in a database other tests share.
     */
    public static Map<String, Object> unique(String prefix) {
        return with(llamaTp2(), "modelId", prefix + "-" + UUID.randomUUID());
    }

    /** A unique contract of TP {@code tp} over {@code transportClass}. */
    public static Map<String, Object> unique(String prefix, int tp, String transportClass) {
        Map<String, Object> c = unique(prefix);
        c.put("tpSize", tp);
        c.put("transportClass", transportClass);
        return c;
    }

    /** A copy of {@code contract} with one field set. */
    public static Map<String, Object> with(Map<String, Object> contract, String field, Object value) {
        Map<String, Object> c = new LinkedHashMap<>(contract);
        c.put(field, value);
        return c;
    }
}
