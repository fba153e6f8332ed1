package io.kvreuse.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ContractDigestTests {

    static LayoutContract contract(Map<String, String> extra) {
        return new LayoutContract(
                "m",
                "r",
                "t",
                "vllm",
                "1",
                "bf16",
                "bf16",
                null,
                2,
                4,
                64,
                "FA",
                16,
                "h",
                LayoutContract.MemoryLayout.FULLY_CONTIGUOUS,
                LayoutContract.KvLayout.NHD,
                1024,
                2,
                1,
                1,
                1,
                TransportClass.GPU_CUDA_IPC,
                new TreeMap<>(extra));
    }

    @Test
    void canonicalJsonSortsKeysOmitsAbsentQuantAndEscapesOnlyWhatJsonRequires() {
        String json = ContractDigest.canonicalJson(contract(Map.of("z", "é\"\\\n", "a", "1")));
        assertThat(json)
                .startsWith("{\"attentionBackend\":\"FA\",\"blockSizeTokens\":16,\"bytesPerBlockPerRank\":1024,")
                .contains("\"extra\":{\"a\":\"1\",\"z\":\"é\\\"\\\\\\u000a\"}")
                .doesNotContain("kvQuantScheme")
                .doesNotContain(" ");
    }

    @Test
    void idIsStableAndDependsOnEveryField() {
        String id = ContractDigest.domainId(contract(Map.of()));
        assertThat(ContractDigest.domainId(contract(Map.of()))).isEqualTo(id);
        assertThat(ContractDigest.domainId(contract(Map.of("k", "v")))).isNotEqualTo(id);
        assertThat(ContractDigest.looksLikeId(id)).isTrue();
        assertThat(ContractDigest.looksLikeId("ld-XYZ")).isFalse();
    }

    @Test
    void normaliseUsesNfcAndStrips() {
        assertThat(ContractDigest.normalise(" e\u0301 ")).isEqualTo("\u00e9");
    }
}
