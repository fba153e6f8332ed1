package io.kvreuse.settings;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The JSON form of the settings: exactly what GET returns can be PUT back. Unknown fields and
 * wrong types are refused, never ignored (fail closed).
 */
final class SettingsDocument {

    private static final Set<String> READ_ONLY = Set.of("updatedAt", "updatedBy");
    private static final List<String> FIELDS = List.of(
            "enabled",
            "allowMnnvl",
            "minFetchBlocks",
            "maxFetchBlocks",
            "maxFetchBytes",
            "maxDonorCandidates",
            "minGainMs",
            "minGainRatio",
            "leaseTtlMs",
            "transferDeadlineMs",
            "abandonDeadlineMs",
            "maxInflightPerDonor",
            "maxInflightPerTarget");

    private SettingsDocument() {}

    static Map<String, Object> render(StoredSettings stored) {
        ReuseSettings s = stored.settings();
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("enabled", s.enabled());
        doc.put("allowMnnvl", s.allowMnnvl());
        doc.put("minFetchBlocks", s.minFetchBlocks());
        doc.put("maxFetchBlocks", s.maxFetchBlocks());
        doc.put("maxFetchBytes", s.maxFetchBytes());
        doc.put("maxDonorCandidates", s.maxDonorCandidates());
        doc.put("minGainMs", s.minGainMs());
        doc.put("minGainRatio", s.minGainRatio());
        doc.put("leaseTtlMs", s.leaseTtlMs());
        doc.put("transferDeadlineMs", s.transferDeadlineMs());
        doc.put("abandonDeadlineMs", s.abandonDeadlineMs());
        doc.put("maxInflightPerDonor", s.maxInflightPerDonor());
        doc.put("maxInflightPerTarget", s.maxInflightPerTarget());
        doc.put("version", stored.version());
        doc.put("updatedAt", stored.updatedAt().toString());
        doc.put("updatedBy", stored.updatedBy());
        return doc;
    }

    /** A parsed PUT body: the settings and, when given, the version the caller edited. */
    record Parsed(ReuseSettings settings, @Nullable Long expectedVersion) {}

    static Parsed parse(@Nullable JsonNode body) {
        if (body == null || !body.isObject()) {
            throw invalid(ProblemType.INVALID_SETTINGS, "the settings document must be a JSON object");
        }
        List<String> errors = new ArrayList<>();
        for (String name : body.propertyNames()) {
            if (!FIELDS.contains(name) && !READ_ONLY.contains(name) && !name.equals("version")) {
                errors.add(name + ": unknown setting");
            }
        }
        if (!errors.isEmpty()) {
            throw invalid(ProblemType.UNKNOWN_SETTING, String.join("; ", errors));
        }
        Reader r = new Reader(body, errors);
        ReuseSettings s = new ReuseSettings(
                r.bool("enabled"),
                r.bool("allowMnnvl"),
                r.integer("minFetchBlocks"),
                r.integer("maxFetchBlocks"),
                r.longValue("maxFetchBytes"),
                r.integer("maxDonorCandidates"),
                r.number("minGainMs"),
                r.number("minGainRatio"),
                r.longValue("leaseTtlMs"),
                r.longValue("transferDeadlineMs"),
                r.longValue("abandonDeadlineMs"),
                r.integer("maxInflightPerDonor"),
                r.integer("maxInflightPerTarget"));
        Long version = body.has("version") ? r.longValue("version") : null;
        if (errors.isEmpty()) {
            errors.addAll(s.violations());
        }
        if (!errors.isEmpty()) {
            throw invalid(ProblemType.INVALID_SETTINGS, String.join("; ", errors));
        }
        return new Parsed(s, version);
    }

    private static InvalidRequestException invalid(ProblemType type, String detail) {
        return new InvalidRequestException(type, detail);
    }

    /** Reads typed fields, collecting every error instead of stopping at the first. */
    private record Reader(JsonNode body, List<String> errors) {

        boolean bool(String name) {
            JsonNode n = body.get(name);
            if (n == null || !n.isBoolean()) {
                errors.add(name + ": required, true or false");
                return false;
            }
            return n.booleanValue();
        }

        int integer(String name) {
            long v = longValue(name);
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                errors.add(name + ": out of range");
                return 0;
            }
            return (int) v;
        }

        long longValue(String name) {
            JsonNode n = body.get(name);
            if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
                errors.add(name + ": required, a whole number");
                return 0;
            }
            return n.longValue();
        }

        double number(String name) {
            JsonNode n = body.get(name);
            if (n == null || !n.isNumber()) {
                errors.add(name + ": required, a number");
                return 0;
            }
            return n.doubleValue();
        }
    }
}
