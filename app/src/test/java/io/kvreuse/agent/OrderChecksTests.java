package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.protocol.TransferOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

class OrderChecksTests {

    private static final List<List<Integer>> RUNS = List.of(List.of(0, 4));

    @Test
    void partWhoseRegionsTheirEnginesRegisteredPasses() {
        assertThatCode(() -> OrderChecks.check(part(
                        end("shm://bank-a-0", List.of("shm://bank-a-0")),
                        end("shm://dst-b-0", List.of("shm://dst-b-0", "shm://dst-b-extra")))))
                .doesNotThrowAnyException();
    }

    @Test
    void destinationNotAmongTheTargetsRegisteredRegionsIsRefused() {
        assertThatThrownBy(() -> OrderChecks.check(part(
                        end("shm://bank-a-0", List.of("shm://bank-a-0")),
                        end("shm://bank-a-0", List.of("shm://dst-b-0")))))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("destination region shm://bank-a-0")
                .hasMessageContaining("not one its engine registered");
        // an order without the list (an older control plane) proves nothing
        assertThatThrownBy(() -> OrderChecks.check(
                        part(end("shm://bank-a-0", List.of("shm://bank-a-0")), end("shm://dst-b-0", null))))
                .isInstanceOf(PartRefusedException.class);
    }

    @Test
    void regionReferenceOutsideTheImportedSchemesIsRefusedEvenIfListed() {
        for (String ref : List.of("shm://../../etc/passwd", "file:///etc/passwd", "shm://a/b", "shm://a..b")) {
            assertThatThrownBy(() -> OrderChecks.check(
                            part(end("shm://bank-a-0", List.of("shm://bank-a-0")), end(ref, List.of(ref)))))
                    .as(ref)
                    .isInstanceOf(PartRefusedException.class)
                    .hasMessageContaining("destination region of rank 0 refused");
            assertThatThrownBy(
                            () -> OrderChecks.check(part(end(ref, List.of(ref)), end("shm://d", List.of("shm://d")))))
                    .as(ref)
                    .isInstanceOf(PartRefusedException.class)
                    .hasMessageContaining("source region");
        }
    }

    private static TransferOrder.Part part(TransferOrder.Endpoint source, TransferOrder.Endpoint destination) {
        return new TransferOrder.Part(0, source, destination, RUNS, 4096);
    }

    private static TransferOrder.Endpoint end(String ref, List<String> registered) {
        return new TransferOrder.Endpoint("h", 0, "kvreuse@h/gpu0", ref, RUNS, 1024, registered);
    }
}
