package io.kvreuse.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RequestsTests {

    @Test
    void storedChainLinksEachBlockToItsParentAndWritesHashesUnsigned() {
        long[] chain = {-1L, 42L, Long.MIN_VALUE};
        Map<String, Object> event = Requests.stored(chain, 10);

        assertThat(event).containsEntry("type", "STORED");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> blocks = (List<Map<String, Object>>) event.get("blocks");
        assertThat(blocks).hasSize(3);
        assertThat(blocks.get(0))
                .containsEntry("seqHash", "18446744073709551615")
                .containsEntry("position", 0)
                .containsEntry("slot", 10)
                .doesNotContainKey("parentHash");
        assertThat(blocks.get(1))
                .containsEntry("seqHash", "42")
                .containsEntry("parentHash", "18446744073709551615")
                .containsEntry("slot", 11);
        assertThat(blocks.get(2))
                .containsEntry("seqHash", "9223372036854775808")
                .containsEntry("parentHash", "42")
                .containsEntry("position", 2);
        assertThat(Requests.hashes(chain)).containsExactly("18446744073709551615", "42", "9223372036854775808");
    }

    @Test
    void registrationNamesOneDistinctGpuPerRank() {
        Map<String, Object> r =
                Requests.registration("DECODE", "d-1", "host-a", Requests.GPU_FETCH, Requests.ranks(2, 4));

        assertThat(r)
                .containsEntry("role", "DECODE")
                .containsEntry("domainId", "d-1")
                .containsEntry("hostId", "host-a")
                .containsEntry("controlEndpoint", "tcp://host-a:5557");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> ranks = (List<Map<String, Object>>) r.get("ranks");
        assertThat(ranks).extracting(m -> m.get("rank")).containsExactly(0, 1);
        assertThat(ranks).extracting(m -> m.get("gpuOrdinal")).containsExactly(4, 5);
        assertThat(ranks).extracting(m -> m.get("gpuUuid")).doesNotHaveDuplicates();
    }

    @Test
    void agentRegistrationHasOneNixlAgentPerGpu() {
        Map<String, Object> a = Requests.agent("host-b", 3, "a");

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> nixl = (List<Map<String, Object>>) a.get("nixlAgents");
        assertThat(nixl).extracting(m -> m.get("name")).containsExactly("a0", "a1", "a2");
        assertThat(nixl).extracting(m -> m.get("gpuOrdinal")).containsExactly(0, 1, 2);
        assertThat((List<?>) a.get("gpus")).hasSize(3);
    }

    @Test
    void uniqueContractsDifferOnlyInTheirModel() {
        Map<String, Object> a = SampleContracts.unique("t", 1, "HOST_SHM");
        Map<String, Object> b = SampleContracts.unique("t", 1, "HOST_SHM");

        assertThat(a.get("modelId")).isNotEqualTo(b.get("modelId"));
        assertThat(a).containsEntry("tpSize", 1).containsEntry("transportClass", "HOST_SHM");
        a.remove("modelId");
        b.remove("modelId");
        assertThat(a).isEqualTo(b);
        assertThat(SampleContracts.llamaTp2())
                .containsEntry("bytesPerBlockPerRank", 1048576)
                .containsEntry("tpSize", 2)
                .containsEntry("transportClass", "GPU_CUDA_IPC");
    }
}
