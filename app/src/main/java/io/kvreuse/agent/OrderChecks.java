package io.kvreuse.agent;

import io.kvreuse.protocol.RegionRef;
import io.kvreuse.protocol.TransferOrder;
import java.util.List;

/**
 * What the agent checks of a part before it touches any memory, whatever the control plane sent:
 * each end's region has the syntax of a scheme this agent imports, and is one its engine registered
 * for the rank (the order lists them). Otherwise the part is refused and nothing is imported.
 */
final class OrderChecks {

    private OrderChecks() {}

    static void check(TransferOrder.Part part) {
        check("source", part.rank(), part.source());
        check("destination", part.rank(), part.destination());
    }

    private static void check(String side, int rank, TransferOrder.Endpoint end) {
        String problem = RegionRef.problem(end.regionRef());
        if (problem != null) {
            throw new PartRefusedException(side + " region of rank " + rank + " refused: " + problem);
        }
        List<String> registered = end.registeredRegions();
        if (registered == null || !registered.contains(end.regionRef())) {
            throw new PartRefusedException(side + " region " + end.regionRef() + " of rank " + rank
                    + " is not one its engine registered for the rank");
        }
    }
}
