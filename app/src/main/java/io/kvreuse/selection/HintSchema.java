package io.kvreuse.selection;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;

/**
 * The shape of a hint envelope, for the served OpenAPI document only: {@link HintBuilder} writes
 * the envelope itself, by hand, on the hot path. Field names are the engines' (snake case).
 */
final class HintSchema {

    private HintSchema() {}

    @Schema(
            name = "HintEnvelope",
            description = "The hint the router hands to the prefill engine with the request: one kv.fetch_gpu@1.0 "
                    + "(or, for CPU_TP1 domains, kv.fetch@1.0) action. Hashes inside are exact JSON integers "
                    + "(unsigned 64-bit); the whole envelope is at most 64 KiB.",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record Envelope(
            @Schema(
                    description = "Envelope format version",
                    example = "0.1",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String protocol_version,

            @Schema(
                    description = "Unique id of this envelope",
                    format = "uuid",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String message_id,

            @Schema(
                    description = "The actions the engine performs; always exactly one",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            List<Action> actions) {}

    @Schema(
            name = "HintAction",
            description = "One action of a hint envelope",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record Action(
            @Schema(
                    description = "Id of the action: the lease id for kv.fetch_gpu, a fresh id for kv.fetch",
                    format = "uuid",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String action_id,

            @Schema(
                    description = "kv.fetch_gpu (GPU to GPU through a node agent) or kv.fetch (CPU, TP 1)",
                    allowableValues = {"kv.fetch_gpu", "kv.fetch"},
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String action_type,

            @Schema(
                    description = "Version of the action's payload format",
                    example = "1.0",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String action_version,

            @Schema(
                    description = "What to fetch: a GPU payload for kv.fetch_gpu, a CPU payload for kv.fetch",
                    oneOf = {GpuPayload.class, CpuPayload.class},
                    requiredMode = Schema.RequiredMode.REQUIRED)
            Object payload) {}

    @Schema(
            name = "GpuFetchPayload",
            description =
                    "The payload of kv.fetch_gpu@1.0: which blocks to fetch from which donor bank, into the target, rank by rank",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record GpuPayload(
            @Schema(
                    description = "The PROPOSED lease this fetch runs under",
                    format = "uuid",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String lease_id,

            @Schema(
                    description = "When the lease expires unless the target reports its destination (RFC 3339)",
                    format = "date-time",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String lease_deadline,

            @Schema(
                    description = "When the transfer must be done (RFC 3339)",
                    format = "date-time",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String transfer_deadline,

            @Schema(
                    description = "The layout domain donor and target share",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String domain_id,

            @Schema(
                    description = "The donor: incarnation, fencing epoch, bank and its control endpoint",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            Source source,

            @Schema(
                    description = "The target: incarnation and fencing epoch",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            Target target,

            @Schema(description = "Tokens per block", requiredMode = Schema.RequiredMode.REQUIRED)
            int block_size,

            @Schema(
                    description = "Blocks the target already holds; the fetched ones follow them",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            int local_prefix_blocks,

            @Schema(description = "Blocks to fetch", requiredMode = Schema.RequiredMode.REQUIRED)
            int fetch_blocks,

            @Schema(
                    description =
                            "Sequence hashes of the fetched blocks, in order, as exact unsigned 64-bit JSON integers",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            List<java.math.BigInteger> block_hashes,

            @Schema(
                    description = "Where the blocks are in the donor's bank: runs [start, count] of slots",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            List<List<Integer>> source_slot_runs,

            @Schema(
                    description = "GPU_CUDA_IPC (same host) or GPU_MNNVL (multi-node NVLink)",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String transport_class,

            @Schema(description = "One entry per tensor-parallel rank", requiredMode = Schema.RequiredMode.REQUIRED)
            List<RankPart> parts) {}

    @Schema(
            name = "HintSource",
            description = "The donor side of a GPU hint",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record Source(
            @Schema(description = "The donor incarnation", format = "uuid", requiredMode = Schema.RequiredMode.REQUIRED)
            String incarnation_id,

            @Schema(
                    description = "The donor's fencing epoch when the hint was made",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            long fencing_epoch,

            @Schema(
                    description = "The donor's retained bank holding the blocks",
                    format = "uuid",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String bank_id,

            @Schema(
                    description = "The bank's epoch when the hint was made",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            long bank_epoch,

            @Schema(
                    description = "The donor's control endpoint, tcp://host:port",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String control_endpoint) {}

    @Schema(
            name = "HintTarget",
            description = "The target side of a GPU hint",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record Target(
            @Schema(
                    description = "The target (prefill) incarnation",
                    format = "uuid",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String incarnation_id,

            @Schema(
                    description = "The target's fencing epoch when the hint was made",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            long fencing_epoch) {}

    @Schema(
            name = "HintRankPart",
            description = "One rank of a GPU hint: source and target GPU and their NIXL agents",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record RankPart(
            @Schema(description = "Tensor-parallel rank", requiredMode = Schema.RequiredMode.REQUIRED)
            int rank,

            @Schema(
                    description = "The donor rank's GPU ordinal on its host",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            int source_gpu_ordinal,

            @Schema(
                    description = "The target rank's GPU ordinal on its host",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            int target_gpu_ordinal,

            @Schema(
                    description = "NIXL agent of the donor GPU, kvreuse@<host>/gpu<ordinal>",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String source_nixl_agent,

            @Schema(
                    description = "NIXL agent of the target GPU, kvreuse@<host>/gpu<ordinal>",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String target_nixl_agent,

            @Schema(description = "Bytes this rank moves", requiredMode = Schema.RequiredMode.REQUIRED)
            long bytes) {}

    @Schema(
            name = "CpuFetchPayload",
            description = "The payload of kv.fetch@1.0: the root-aligned hashes the target needs from the source",
            additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
    record CpuPayload(
            @Schema(
                    description = "The donor's control endpoint, tcp://host:port",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            String source_control_endpoint,

            @Schema(
                    description = "Sequence hashes from the root, as exact unsigned 64-bit JSON integers",
                    requiredMode = Schema.RequiredMode.REQUIRED)
            List<java.math.BigInteger> block_hashes) {}
}
