package io.kvreuse.admin;

import io.kvreuse.settings.ReuseSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What a settings form would change, in the units the page shows. Switching reuse or cross-host
 * MNNVL transfers acts on the whole fleet at once, so those changes are dangerous: the operator
 * confirms them, by name, before anything is saved.
 */
record SettingsChanges(List<Change> changes) {

    /** One changed setting, before and after as displayed. */
    record Change(String field, String label, String before, String after, boolean dangerous, String action) {

        /** The question naming this change, e.g. "Turn reuse ON for the whole fleet?". */
        public String question() {
            return Character.toUpperCase(action.charAt(0)) + action.substring(1) + " for the whole fleet?";
        }
    }

    private record Field(String name, String label, Function<ReuseSettings, String> shown, boolean dangerous) {}

    private static final List<Field> FIELDS = List.of(
            new Field("enabled", "Reuse", s -> s.enabled() ? "ON" : "OFF", true),
            new Field("allowMnnvl", "MNNVL transfers between hosts", s -> s.allowMnnvl() ? "allowed" : "off", true),
            new Field("minFetchBlocks", "Min fetch", s -> s.minFetchBlocks() + " blocks", false),
            new Field("maxFetchBlocks", "Max fetch", s -> s.maxFetchBlocks() + " blocks", false),
            new Field("maxFetchBytes", "Max fetch size", s -> HumanUnits.bytes(s.maxFetchBytes()), false),
            new Field(
                    "maxDonorCandidates", "Max donor candidates", s -> Integer.toString(s.maxDonorCandidates()), false),
            new Field("minGainMs", "Min gain", s -> HumanUnits.millis(s.minGainMs()), false),
            new Field("minGainRatio", "Min gain ratio", s -> HumanUnits.percent(s.minGainRatio()), false),
            new Field("leaseTtlMs", "Lease TTL", s -> HumanUnits.millis(s.leaseTtlMs()), false),
            new Field("transferDeadlineMs", "Transfer deadline", s -> HumanUnits.millis(s.transferDeadlineMs()), false),
            new Field("abandonDeadlineMs", "Abandon deadline", s -> HumanUnits.millis(s.abandonDeadlineMs()), false),
            new Field(
                    "maxInflightPerDonor",
                    "Max in flight per donor",
                    s -> Integer.toString(s.maxInflightPerDonor()),
                    false),
            new Field(
                    "maxInflightPerTarget",
                    "Max in flight per target",
                    s -> Integer.toString(s.maxInflightPerTarget()),
                    false));

    static SettingsChanges between(ReuseSettings before, ReuseSettings after) {
        List<Change> changes = new ArrayList<>();
        for (Field f : FIELDS) {
            String was = f.shown().apply(before);
            String will = f.shown().apply(after);
            if (!was.equals(will)) {
                changes.add(new Change(f.name(), f.label(), was, will, f.dangerous(), action(f.name(), after)));
            }
        }
        return new SettingsChanges(List.copyOf(changes));
    }

    private static String action(String field, ReuseSettings after) {
        return switch (field) {
            case "enabled" -> after.enabled() ? "turn reuse ON" : "turn reuse OFF";
            case "allowMnnvl" ->
                after.allowMnnvl() ? "allow MNNVL transfers between hosts" : "stop MNNVL transfers between hosts";
            default -> "change " + field;
        };
    }

    public List<Change> dangerous() {
        return changes.stream().filter(Change::dangerous).toList();
    }

    public boolean needsConfirmation() {
        return !dangerous().isEmpty();
    }

    /** The question the operator answers, naming exactly the dangerous change(s). */
    public String question() {
        return dangerous().stream().map(Change::question).collect(Collectors.joining(" "));
    }

    /** The confirming button, e.g. "Yes, turn reuse ON". */
    public String confirmLabel() {
        var d = dangerous();
        return d.size() == 1 ? "Yes, " + d.getFirst().action() : "Yes, apply these changes";
    }

    /**
     * What the confirmation form carries back: the dangerous changes and the version they were
     * shown against, so a confirmation never applies a change other than the one it named.
     */
    String fingerprint(long version) {
        return "v" + version + ":"
                + dangerous().stream().map(c -> c.field() + "=" + c.after()).collect(Collectors.joining(","));
    }
}
