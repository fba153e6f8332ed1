package io.kvreuse.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scraped Prometheus text exposition: its families ({@code # HELP} and {@code # TYPE}) and its
 * samples, and the naming rules kvreuse's own families follow.
 */
public final class Exposition {

    /** One family: its type and help text (null when the exposition has no HELP line for it). */
    public record Family(String name, String type, String help) {}

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, String value) {}

    private static final Pattern SAMPLE =
            Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)(\\s+\\S+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    /** Label values that stand for "no value": a label carrying one of them should not be on that series. */
    public static final Set<String> PLACEHOLDERS =
            Set.of("", "NONE", "none", "None", "null", "NULL", "N/A", "n/a", "?", "-");

    /** Units that are not base units. */
    private static final List<String> NON_BASE_UNITS = List.of(
            "milliseconds",
            "millis",
            "ms",
            "microseconds",
            "micros",
            "us",
            "nanoseconds",
            "nanos",
            "ns",
            "minutes",
            "hours",
            "kilobytes",
            "kb",
            "megabytes",
            "mb",
            "mib",
            "gib",
            "gigabytes");

    private final Map<String, Family> families = new LinkedHashMap<>();
    private final List<Sample> samples = new ArrayList<>();

    private Exposition() {}

    public static Exposition parse(String text) {
        Exposition e = new Exposition();
        Map<String, String> help = new LinkedHashMap<>();
        Map<String, String> types = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("# HELP ")) {
                String[] p = line.substring(7).split(" ", 2);
                help.put(p[0], p.length > 1 ? p[1] : "");
            } else if (line.startsWith("# TYPE ")) {
                String[] p = line.substring(7).split(" ", 2);
                types.put(p[0], p.length > 1 ? p[1].strip() : "");
            } else if (!line.startsWith("#")) {
                Matcher m = SAMPLE.matcher(line);
                if (!m.matches()) {
                    throw new IllegalArgumentException("not a sample line: " + line);
                }
                Map<String, String> labels = new LinkedHashMap<>();
                if (m.group(3) != null) {
                    Matcher l = LABEL.matcher(m.group(3));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                e.samples.add(new Sample(m.group(1), labels, m.group(4)));
            }
        }
        types.forEach((name, type) -> e.families.put(name, new Family(name, type, help.get(name))));
        return e;
    }

    public Map<String, Family> families() {
        return families;
    }

    public List<Sample> samples() {
        return samples;
    }

    /** Every sample name (histograms contribute their _bucket, _count and _sum series). */
    public Set<String> sampleNames() {
        Set<String> names = new TreeSet<>();
        samples.forEach(s -> names.add(s.name()));
        return names;
    }

    public List<Sample> samples(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /**
     * What breaks Prometheus' naming conventions among the families whose name starts with {@code
     * prefix}: missing help, non-base units, a unit twice, {@code _total} on anything but a
     * counter (and missing on a counter), a histogram or summary without a unit (or {@code _ratio}),
     * a unit that is not the name's suffix, and placeholder label values.
     */
    public List<String> violations(String prefix) {
        List<String> out = new ArrayList<>();
        for (Family f : families.values()) {
            String name = f.name();
            if (!name.startsWith(prefix)) {
                continue;
            }
            if (f.help() == null || f.help().isBlank()) {
                out.add(name + ": no help text");
            }
            List<String> words = List.of(name.split("_"));
            for (String unit : NON_BASE_UNITS) {
                if (words.contains(unit)) {
                    out.add(name + ": unit " + unit + " is not a base unit (seconds, bytes)");
                }
            }
            for (String unit : List.of("seconds", "bytes")) {
                long n = words.stream().filter(unit::equals).count();
                if (n > 1) {
                    out.add(name + ": unit " + unit + " appears " + n + " times");
                }
                if (n == 1) {
                    String base = name.replaceAll("_(total|max)$", "");
                    if (!base.endsWith("_" + unit)) {
                        out.add(name + ": unit " + unit + " is not the suffix of the name");
                    }
                }
            }
            boolean total = name.endsWith("_total");
            if ("counter".equals(f.type()) && !total) {
                out.add(name + ": a counter's name ends with _total");
            }
            if (!"counter".equals(f.type()) && total) {
                out.add(name + ": only counters end with _total (this is a " + f.type() + ")");
            }
            if (("histogram".equals(f.type()) || "summary".equals(f.type()))
                    && !(name.endsWith("_seconds") || name.endsWith("_bytes") || name.endsWith("_ratio"))) {
                out.add(name + ": a " + f.type() + " names its unit (_seconds, _bytes) or is a _ratio");
            }
        }
        for (Sample s : samples) {
            if (!s.name().startsWith(prefix)) {
                continue;
            }
            s.labels().forEach((label, value) -> {
                if (PLACEHOLDERS.contains(value)) {
                    out.add(s.name() + s.labels() + ": label " + label + " has the placeholder value \"" + value
                            + "\"");
                }
            });
        }
        return out;
    }
}
