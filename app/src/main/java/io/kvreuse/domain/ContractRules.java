package io.kvreuse.domain;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The certification rules of DESIGN §3, checked after field validation. Each refusal is a 422 with
 * its own slug; the rules, in the order they are checked:
 *
 * <ol>
 *   <li>{@code parallelism-not-supported}: dpSize, ppSize and cpSize must all be 1.
 *   <li>{@code cpu-transport-requires-tp1}: a {@code CPU_TP1} domain has tpSize 1.
 *   <li>{@code mixed-transport-not-supported}: no {@code extra} key or value (split on commas,
 *       semicolons and blanks, compared case-insensitively) may name a transport class of the other
 *       family (CPU versus GPU) than the domain's, e.g. {@code extra.fallbackTransport=CPU_TP1} in a
 *       GPU domain.
 *   <li>{@code transform-not-supported}: a GPU domain may not carry a transform marker: an {@code
 *       extra} key equal (case-insensitively) to {@code transform}, {@code tpResharding} or {@code
 *       layoutConversion}, or starting with {@code transform.}, whose value is not one of {@code ""},
 *       {@code none}, {@code false}, {@code 0}. GPU transfers copy blocks byte for byte; the CPU
 *       path may convert on the engine side.
 *   <li>{@code head-partition-not-supported}: {@code extra.headPartition}, when present, is {@code
 *       split} or {@code replicate}.
 *   <li>{@code tp-must-divide-kv-heads}: with {@code headPartition} absent or {@code split}, tpSize
 *       divides numKvHeads; with {@code replicate} (the model replicates KV heads when TP exceeds
 *       them, as vLLM does for GQA) either tpSize divides numKvHeads or numKvHeads divides tpSize.
 * </ol>
 */
final class ContractRules {

    static final String HEAD_PARTITION = "headPartition";
    private static final Set<String> TRANSFORM_KEYS = Set.of("transform", "tpresharding", "layoutconversion");
    private static final Set<String> NO_TRANSFORM_VALUES = Set.of("", "none", "false", "0");

    private ContractRules() {}

    static void check(LayoutContract c) {
        if (c.dpSize() != 1 || c.ppSize() != 1 || c.cpSize() != 1) {
            throw refused(
                            ProblemType.PARALLELISM_NOT_SUPPORTED,
                            "only tensor parallelism is supported: dpSize, ppSize and cpSize must be 1 (got %d, %d, %d)"
                                    .formatted(c.dpSize(), c.ppSize(), c.cpSize()))
                    .with("dpSize", c.dpSize())
                    .with("ppSize", c.ppSize())
                    .with("cpSize", c.cpSize());
        }
        if (c.transportClass() == TransportClass.CPU_TP1 && c.tpSize() != 1) {
            throw refused(ProblemType.CPU_TRANSPORT_REQUIRES_TP1, "transport CPU_TP1 needs tpSize 1, got " + c.tpSize())
                    .with("tpSize", c.tpSize());
        }
        checkMixedTransport(c);
        checkTransforms(c);
        checkHeadPartition(c);
    }

    private static void checkMixedTransport(LayoutContract c) {
        for (Map.Entry<String, String> e : c.extra().entrySet()) {
            for (String token : tokens(e.getKey() + " " + e.getValue())) {
                for (TransportClass other : TransportClass.values()) {
                    if (other.isGpu() != c.transportClass().isGpu()
                            && other.name().equalsIgnoreCase(token)) {
                        throw refused(
                                        ProblemType.MIXED_TRANSPORT_NOT_SUPPORTED,
                                        "a %s domain may not also name %s (extra.%s)"
                                                .formatted(c.transportClass(), other, e.getKey()))
                                .with("extraKey", e.getKey());
                    }
                }
            }
        }
    }

    private static void checkTransforms(LayoutContract c) {
        if (!c.transportClass().isGpu()) {
            return;
        }
        for (Map.Entry<String, String> e : c.extra().entrySet()) {
            String key = e.getKey().toLowerCase(Locale.ROOT);
            boolean marker = TRANSFORM_KEYS.contains(key) || key.startsWith("transform.");
            if (marker && !NO_TRANSFORM_VALUES.contains(e.getValue().toLowerCase(Locale.ROOT))) {
                throw refused(
                                ProblemType.TRANSFORM_NOT_SUPPORTED,
                                "GPU transport copies blocks unchanged; extra.%s=%s asks for a transform"
                                        .formatted(e.getKey(), e.getValue()))
                        .with("extraKey", e.getKey());
            }
        }
    }

    private static void checkHeadPartition(LayoutContract c) {
        String partition = c.extra(HEAD_PARTITION);
        boolean replicate = "replicate".equals(partition);
        if (partition != null && !replicate && !"split".equals(partition)) {
            throw refused(
                            ProblemType.HEAD_PARTITION_NOT_SUPPORTED,
                            "extra.headPartition must be 'split' or 'replicate', got '" + partition + "'")
                    .with("headPartition", partition);
        }
        int tp = c.tpSize();
        int heads = c.numKvHeads();
        boolean ok = heads % tp == 0 || (replicate && tp % heads == 0);
        if (!ok) {
            throw refused(
                            ProblemType.TP_MUST_DIVIDE_KV_HEADS,
                            replicate
                                    ? "with headPartition=replicate, tpSize %d and numKvHeads %d must divide one another"
                                            .formatted(tp, heads)
                                    : "tpSize %d does not divide numKvHeads %d (set extra.headPartition=replicate if the model replicates KV heads)"
                                            .formatted(tp, heads))
                    .with("tpSize", tp)
                    .with("numKvHeads", heads);
        }
    }

    private static String[] tokens(String s) {
        return Arrays.stream(s.split("[,;\\s]+")).filter(t -> !t.isEmpty()).toArray(String[]::new);
    }

    private static KvReuseException refused(ProblemType type, String detail) {
        return new KvReuseException(type, detail);
    }
}
