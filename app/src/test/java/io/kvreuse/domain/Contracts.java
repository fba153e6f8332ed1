package io.kvreuse.domain;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Test contracts: a valid GPU contract unique to each call, and certification over HTTP. */
public final class Contracts {

    private Contracts() {}

    /** A valid TP-2 CUDA IPC contract with a model id nobody else uses. */
    public static Map<String, Object> valid() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("modelId", "test-model-" + UUID.randomUUID());
        c.put("modelRevision", "rev-1");
        c.put("tokenizerRevision", "tok-1");
        c.put("engine", "vllm");
        c.put("engineVersion", "0.11.0");
        c.put("dtype", "bfloat16");
        c.put("kvCacheDtype", "bfloat16");
        c.put("numLayers", 32);
        c.put("numKvHeads", 8);
        c.put("headDim", 128);
        c.put("attentionBackend", "FLASH_ATTN");
        c.put("blockSizeTokens", 16);
        c.put("hashFormat", "sha256-cbor;seed=0;salt=none;mm=v1");
        c.put("memoryLayout", "LAYER_SEPARATE");
        c.put("kvLayout", "NHD");
        c.put("bytesPerBlockPerRank", 2_097_152);
        c.put("tpSize", 2);
        c.put("dpSize", 1);
        c.put("ppSize", 1);
        c.put("cpSize", 1);
        c.put("transportClass", "GPU_CUDA_IPC");
        return c;
    }

    public static Map<String, Object> with(Map<String, Object> contract, String field, Object value) {
        Map<String, Object> c = new LinkedHashMap<>(contract);
        c.put(field, value);
        return c;
    }

    /** Certifies a fresh valid contract with the given TP size and returns its domain id. */
    public static String certify(WebTestClient http, String operatorToken, int tpSize) {
        return certify(http, operatorToken, with(valid(), "tpSize", tpSize));
    }

    public static String certify(WebTestClient http, String operatorToken, Map<String, Object> contract) {
        return http.post()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + operatorToken)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(contract)
                .exchange()
                .expectStatus()
                .isCreated()
                .expectBody(Map.class)
                .returnResult()
                .getResponseBody()
                .get("domainId")
                .toString();
    }
}
