package io.kvreuse.sim.demo;

import java.util.LinkedHashMap;
import java.util.Map;

/** The layout contract the demo certifies: Llama-3.1-8B-Instruct served by vLLM at TP 2 on one host. */
final class DemoContract {

    private DemoContract() {}

    static Map<String, Object> llama8bTp2(int bytesPerBlockPerRank) {
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
        c.put("hashFormat", "sim-splitmix64-chain:seed=0");
        c.put("memoryLayout", "LAYER_SEPARATE");
        c.put("kvLayout", "NHD");
        c.put("bytesPerBlockPerRank", bytesPerBlockPerRank);
        c.put("tpSize", DemoFleet.TP);
        c.put("dpSize", 1);
        c.put("ppSize", 1);
        c.put("cpSize", 1);
        c.put("transportClass", "GPU_CUDA_IPC");
        return c;
    }
}
