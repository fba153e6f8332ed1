package io.kvreuse.testkit;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Builds a fleet through the API as an operator would: certifies a domain, mints one token per
 * engine, router and agent, registers engines and heartbeats them READY, gives donors retained
 * banks with every part ready, and registers node agents. Names and model ids are unique, so
 * fleets of several runs can share a database.
 */
public final class FleetBuilder {

    /** A registered, READY engine incarnation with its own ENGINE token. */
    public record Engine(
            String id, String token, String hostId, String domainId, long fencingEpoch, KvReuseClient client) {}

    /** A READY decode engine with a published bank of {@code capacityBlocks}. */
    public record Donor(Engine engine, String bankId, int tp, int capacityBlocks) {

        public String id() {
            return engine.id();
        }

        public String token() {
            return engine.token();
        }
    }

    /** A registered node agent of {@code hostId}. */
    public record Agent(String hostId, String token, long agentEpoch, KvReuseClient client) {}

    private final KvReuseClient operator;

    /** {@code operator} calls with an OPERATOR token. */
    public FleetBuilder(KvReuseClient operator) {
        this.operator = operator;
    }

    public KvReuseClient operator() {
        return operator;
    }

    /** Certifies {@code contract}; the domain id. */
    public String domain(Map<String, ?> contract) {
        return operator.certify(contract);
    }

    /** Applies {@code changes} to the reuse settings. */
    public FleetBuilder reuseSettings(Map<String, ?> changes) {
        operator.changeReuseSettings(changes);
        return this;
    }

    /** A new token of {@code role} with a unique subject {@code <role>-<uuid>}; bound to {@code hostId} if not null. */
    public String token(String role, String hostId) {
        return operator.mint(role, role.toLowerCase(java.util.Locale.ROOT) + "-" + UUID.randomUUID(), hostId);
    }

    /** A client calling as a new ROUTER. */
    public KvReuseClient router() {
        return operator.as(token("ROUTER", null));
    }

    /** Registers an engine of {@code role} on GPUs {@code firstGpu..firstGpu+tp-1} of the host and heartbeats it READY. */
    public Engine engine(String role, String domainId, String hostId, int tp, int firstGpu, List<String> capabilities) {
        KvReuseClient engine = operator.as(token("ENGINE", null));
        String id = engine.register(
                        Requests.registration(role, domainId, hostId, capabilities, Requests.ranks(tp, firstGpu)))
                .get("incarnationId")
                .asString();
        long epoch = engine.heartbeat(id).get("fencingEpoch").asLong();
        return new Engine(id, engine.token(), hostId, domainId, epoch, engine);
    }

    /** A READY decode engine with a bank of {@code capacityBlocks} whose parts are all ready. */
    public Donor donor(String domainId, String hostId, int tp, int firstGpu, int capacityBlocks, long bytesPerBlock) {
        Engine e = engine("DECODE", domainId, hostId, tp, firstGpu, Requests.GPU_FETCH);
        String bankId =
                e.client().createBank(e.id(), capacityBlocks, Requests.bankParts(tp, "bank-" + e.id(), bytesPerBlock));
        for (int r = 0; r < tp; r++) {
            e.client().partReady(bankId, r);
        }
        return new Donor(e, bankId, tp, capacityBlocks);
    }

    /** A READY prefill engine. */
    public Engine target(String domainId, String hostId, int tp, int firstGpu) {
        return engine("PREFILL", domainId, hostId, tp, firstGpu, Requests.GPU_FETCH);
    }

    /** Stores {@code chain} on every rank of the donor's bank at slots {@code firstSlot..}, events numbered from {@code firstEventId}. */
    public void store(Donor donor, long[] chain, int firstSlot, long firstEventId) {
        for (int r = 0; r < donor.tp(); r++) {
            donor.engine()
                    .client()
                    .events(
                            donor.bankId(),
                            Requests.events(r, firstEventId, List.of(Requests.stored(chain, firstSlot))));
        }
    }

    /** A node agent of {@code hostId} with {@code gpus} GPUs, registered with an AGENT token bound to the host. */
    public Agent agent(String hostId, int gpus) {
        KvReuseClient agent = operator.as(token("AGENT", hostId));
        long epoch = agent.registerAgent(Requests.agent(hostId, gpus, "a"))
                .get("agentEpoch")
                .asLong();
        return new Agent(hostId, agent.token(), epoch, agent);
    }
}
