package io.kvreuse.sim.demo;

import io.kvreuse.testkit.SampleContracts;
import java.util.Map;

/** The layout contract the demo certifies: the kit's Llama-3.1-8B TP-2 contract, hashed as the simulated engines hash. */
final class DemoContract {

    private DemoContract() {}

    static Map<String, Object> llama8bTp2(int bytesPerBlockPerRank) {
        Map<String, Object> c = SampleContracts.llamaTp2();
        c.put("hashFormat", "sim-splitmix64-chain:seed=0");
        c.put("bytesPerBlockPerRank", bytesPerBlockPerRank);
        c.put("tpSize", DemoFleet.TP);
        return c;
    }
}
