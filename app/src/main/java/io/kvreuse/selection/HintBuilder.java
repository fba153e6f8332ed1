package io.kvreuse.selection;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.protocol.NixlAgentNames;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;

/**
 * Writes hint envelopes as JSON text. Inside the envelope, which engines parse, u64 hashes are exact
 * JSON integers written from their unsigned value (never through a double); everything else is
 * plain JSON. Hand-written because it runs on every hinted selection and its size is the manifest
 * bound.
 */
final class HintBuilder {

    /** Largest manifest (the whole envelope) an engine accepts. */
    static final int MAX_MANIFEST_BYTES = 64 * 1024;

    private HintBuilder() {}

    /** What a {@code kv.fetch_gpu@1.0} payload carries. */
    record GpuHint(
            UUID leaseId,
            Instant leaseDeadline,
            Instant transferDeadline,
            String domainId,
            FleetDirectory.Incarnation donor,
            UUID bankId,
            long bankEpoch,
            FleetDirectory.Incarnation target,
            int blockSizeTokens,
            int localPrefixBlocks,
            int fetchBlocks,
            long[] chain,
            int[] slotRuns,
            TransportClass transportClass,
            long bytesPerRank) {}

    static String gpu(GpuHint h) {
        StringBuilder json = new StringBuilder(1024 + 22 * h.fetchBlocks());
        json.append("{\"protocol_version\":\"0.1\",\"message_id\":\"")
                .append(RandomIds.next())
                .append("\",\"actions\":[{\"action_id\":\"")
                .append(h.leaseId())
                .append("\",\"action_type\":\"kv.fetch_gpu\",\"action_version\":\"1.0\",\"payload\":{");
        field(json, "lease_id", h.leaseId().toString()).append(',');
        field(json, "lease_deadline", h.leaseDeadline().toString()).append(',');
        field(json, "transfer_deadline", h.transferDeadline().toString()).append(',');
        field(json, "domain_id", h.domainId()).append(',');
        json.append("\"source\":{");
        field(json, "incarnation_id", h.donor().id().toString())
                .append(",\"fencing_epoch\":")
                .append(h.donor().fencingEpoch())
                .append(',');
        field(json, "bank_id", h.bankId().toString())
                .append(",\"bank_epoch\":")
                .append(h.bankEpoch())
                .append(',');
        field(json, "control_endpoint", h.donor().controlEndpoint()).append("},\"target\":{");
        field(json, "incarnation_id", h.target().id().toString())
                .append(",\"fencing_epoch\":")
                .append(h.target().fencingEpoch());
        json.append("},\"block_size\":")
                .append(h.blockSizeTokens())
                .append(",\"local_prefix_blocks\":")
                .append(h.localPrefixBlocks())
                .append(",\"fetch_blocks\":")
                .append(h.fetchBlocks())
                .append(",\"block_hashes\":[");
        for (int i = 0; i < h.fetchBlocks(); i++) {
            if (i > 0) {
                json.append(',');
            }
            unsigned(json, h.chain()[h.localPrefixBlocks() + i]);
        }
        json.append("],\"source_slot_runs\":");
        runs(json, h.slotRuns());
        json.append(',');
        field(json, "transport_class", h.transportClass().name()).append(",\"parts\":[");
        int[] source = h.donor().gpuOrdinals();
        int[] target = h.target().gpuOrdinals();
        for (int rank = 0; rank < source.length; rank++) {
            if (rank > 0) {
                json.append(',');
            }
            json.append("{\"rank\":")
                    .append(rank)
                    .append(",\"source_gpu_ordinal\":")
                    .append(source[rank])
                    .append(",\"target_gpu_ordinal\":")
                    .append(target[rank])
                    .append(',');
            field(json, "source_nixl_agent", NixlAgentNames.of(h.donor().hostId(), source[rank]))
                    .append(',');
            field(json, "target_nixl_agent", NixlAgentNames.of(h.target().hostId(), target[rank]));
            json.append(",\"bytes\":").append(h.bytesPerRank()).append('}');
        }
        json.append("]}}]}");
        return json.toString();
    }

    /** Dynamo's CPU action: the root-aligned hashes the target needs; it fetches the suffix it lacks. */
    static String cpu(String sourceControlEndpoint, long[] chain, int blocks) {
        StringBuilder json = new StringBuilder(128 + 21 * blocks);
        json.append("{\"protocol_version\":\"0.1\",\"message_id\":\"")
                .append(RandomIds.next())
                .append("\",\"actions\":[{\"action_id\":\"")
                .append(RandomIds.next())
                .append("\",\"action_type\":\"kv.fetch\",\"action_version\":\"1.0\",\"payload\":{");
        field(json, "source_control_endpoint", sourceControlEndpoint).append(",\"block_hashes\":[");
        for (int i = 0; i < blocks; i++) {
            if (i > 0) {
                json.append(',');
            }
            unsigned(json, chain[i]);
        }
        return json.append("]}}]}").toString();
    }

    static int bytes(String json) {
        int ascii = json.length();
        for (int i = 0; i < json.length(); i++) {
            if (json.charAt(i) >= 0x80) {
                return json.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        return ascii;
    }

    /** Runs of consecutive slots as {@code [start, count]} pairs, flattened. */
    static int[] slotRuns(int[] slots) {
        int[] runs = new int[slots.length * 2];
        int n = 0;
        for (int i = 0; i < slots.length; i++) {
            if (n > 0 && runs[n - 2] + runs[n - 1] == slots[i]) {
                runs[n - 1]++;
            } else {
                runs[n++] = slots[i];
                runs[n++] = 1;
            }
        }
        return java.util.Arrays.copyOf(runs, n);
    }

    private static void runs(StringBuilder json, int[] runs) {
        json.append('[');
        for (int i = 0; i < runs.length; i += 2) {
            if (i > 0) {
                json.append(',');
            }
            json.append('[').append(runs[i]).append(',').append(runs[i + 1]).append(']');
        }
        json.append(']');
    }

    /** A u64 as its exact decimal digits, written in place (Long.toUnsignedString makes two strings per hash). */
    static StringBuilder unsigned(StringBuilder json, long value) {
        if (value >= 0) {
            return json.append(value);
        }
        long quotient = (value >>> 1) / 5;
        return json.append(quotient).append(value - quotient * 10);
    }

    private static StringBuilder field(StringBuilder json, String name, String value) {
        json.append('"').append(name).append("\":\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"');
    }
}
