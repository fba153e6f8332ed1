package io.kvreuse.domain;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * The canonical form of a layout contract and its digest id. Canonical JSON: object keys sorted by
 * code point, no whitespace, strings NFC-normalised and stripped before they get here, only {@code
 * "}, {@code \} and control characters escaped, integers in plain decimal, an absent {@code
 * kvQuantScheme} omitted and an absent {@code extra} written as {@code {}}. The id is {@code "ld-"}
 * + hex SHA-256 of a version tag and that JSON, so the same contract always gets the same id and any
 * change of a field gets a different one. Changing this format changes every id: bump the tag.
 */
final class ContractDigest {

    static final String PREFIX = "ld-";
    private static final String VERSION_TAG = "kvreuse-layout-contract-v1\n";

    private ContractDigest() {}

    static String domainId(LayoutContract contract) {
        return PREFIX + sha256Hex(VERSION_TAG + canonicalJson(contract));
    }

    /** True when {@code id} has the shape of a domain id (so lookups of garbage skip the store). */
    static boolean looksLikeId(String id) {
        return id.length() == PREFIX.length() + 64
                && id.startsWith(PREFIX)
                && id.substring(PREFIX.length())
                        .chars()
                        .allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    }

    /** NFC then strip: two spellings a person would call the same string hash alike. */
    static String normalise(String s) {
        return Normalizer.normalize(s, Normalizer.Form.NFC).strip();
    }

    static String canonicalJson(LayoutContract c) {
        Map<String, Object> fields = new TreeMap<>();
        fields.put("modelId", c.modelId());
        fields.put("modelRevision", c.modelRevision());
        fields.put("tokenizerRevision", c.tokenizerRevision());
        fields.put("engine", c.engine());
        fields.put("engineVersion", c.engineVersion());
        fields.put("dtype", c.dtype());
        fields.put("kvCacheDtype", c.kvCacheDtype());
        if (c.kvQuantScheme() != null) {
            fields.put("kvQuantScheme", c.kvQuantScheme());
        }
        fields.put("numLayers", c.numLayers());
        fields.put("numKvHeads", c.numKvHeads());
        fields.put("headDim", c.headDim());
        fields.put("attentionBackend", c.attentionBackend());
        fields.put("blockSizeTokens", c.blockSizeTokens());
        fields.put("hashFormat", c.hashFormat());
        fields.put("memoryLayout", c.memoryLayout().name());
        fields.put("kvLayout", c.kvLayout().name());
        fields.put("bytesPerBlockPerRank", c.bytesPerBlockPerRank());
        fields.put("tpSize", c.tpSize());
        fields.put("dpSize", c.dpSize());
        fields.put("ppSize", c.ppSize());
        fields.put("cpSize", c.cpSize());
        fields.put("transportClass", c.transportClass().name());
        fields.put("extra", c.extra());
        StringBuilder out = new StringBuilder(512);
        writeObject(out, fields);
        return out.toString();
    }

    private static void writeObject(StringBuilder out, Map<String, ?> map) {
        out.append('{');
        boolean first = true;
        for (var e : new TreeMap<>(map).entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            writeString(out, e.getKey());
            out.append(':');
            writeValue(out, e.getValue());
        }
        out.append('}');
    }

    private static void writeValue(StringBuilder out, Object value) {
        switch (value) {
            case String s -> writeString(out, s);
            case Integer i -> out.append(i.intValue());
            case Long l -> out.append(l.longValue());
            case Map<?, ?> m -> {
                @SuppressWarnings("unchecked")
                Map<String, ?> typed = (Map<String, ?>) m;
                writeObject(out, typed);
            }
            default -> throw new IllegalArgumentException("not canonical: " + value.getClass());
        }
    }

    private static void writeString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (ch < 0x20) {
                        out.append(String.format("\\u%04x", (int) ch));
                    } else {
                        out.append(ch);
                    }
                }
            }
        }
        out.append('"');
    }

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }
}
