package io.kvreuse.admin;

import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.StoredSettings;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.validation.BindingResult;

/**
 * The settings form: every field of the reuse settings, the version the operator edited (so a
 * concurrent change is refused, not overwritten), an optional reason for the audit trail and the
 * confirmation of a fleet-wide switch. Sizes, durations and shares are typed in human units
 * ({@link HumanUnits}); the range rules are the settings' own ({@link ReuseSettings#violations()}).
 */
class SettingsForm {

    private boolean enabled;
    private boolean allowMnnvl;
    private @NotNull @Nullable Integer minFetchBlocks;
    private @NotNull @Nullable Integer maxFetchBlocks;
    private @NotBlank @Nullable String maxFetchBytes;
    private @NotNull @Nullable Integer maxDonorCandidates;
    private @NotBlank @Nullable String minGainMs;
    private @NotBlank @Nullable String minGainRatio;
    private @NotBlank @Nullable String leaseTtlMs;
    private @NotBlank @Nullable String transferDeadlineMs;
    private @NotBlank @Nullable String abandonDeadlineMs;
    private @NotNull @Nullable Integer maxInflightPerDonor;
    private @NotNull @Nullable Integer maxInflightPerTarget;
    private @NotNull @Nullable Long version;
    private @Size(max = 1000) String reason = "";
    private @Size(max = 200) String confirmation = "";

    static SettingsForm of(StoredSettings stored) {
        SettingsForm f = of(stored.settings());
        f.version = stored.version();
        return f;
    }

    /** The settings as the form shows them, in human units (for the defaults: without a version). */
    static SettingsForm of(ReuseSettings s) {
        SettingsForm f = new SettingsForm();
        f.enabled = s.enabled();
        f.allowMnnvl = s.allowMnnvl();
        f.minFetchBlocks = s.minFetchBlocks();
        f.maxFetchBlocks = s.maxFetchBlocks();
        f.maxFetchBytes = HumanUnits.bytes(s.maxFetchBytes());
        f.maxDonorCandidates = s.maxDonorCandidates();
        f.minGainMs = HumanUnits.millis(s.minGainMs());
        f.minGainRatio = HumanUnits.percent(s.minGainRatio());
        f.leaseTtlMs = HumanUnits.millis(s.leaseTtlMs());
        f.transferDeadlineMs = HumanUnits.millis(s.transferDeadlineMs());
        f.abandonDeadlineMs = HumanUnits.millis(s.abandonDeadlineMs());
        f.maxInflightPerDonor = s.maxInflightPerDonor();
        f.maxInflightPerTarget = s.maxInflightPerTarget();
        return f;
    }

    /** The settings, or null with every unreadable value and broken rule recorded against its field. */
    @Nullable
    ReuseSettings toSettings(BindingResult errors) {
        if (errors.hasErrors()) {
            return null;
        }
        long bytes = read(errors, "maxFetchBytes", maxFetchBytes, HumanUnits::parseBytes, 0L);
        double gain = read(errors, "minGainMs", minGainMs, HumanUnits::parseMillis, 0.0);
        double ratio = read(errors, "minGainRatio", minGainRatio, HumanUnits::parseShare, 0.0);
        long ttl = read(errors, "leaseTtlMs", leaseTtlMs, HumanUnits::parseWholeMillis, 0L);
        long transfer = read(errors, "transferDeadlineMs", transferDeadlineMs, HumanUnits::parseWholeMillis, 0L);
        long abandon = read(errors, "abandonDeadlineMs", abandonDeadlineMs, HumanUnits::parseWholeMillis, 0L);
        ReuseSettings s = new ReuseSettings(
                enabled,
                allowMnnvl,
                minFetchBlocks,
                maxFetchBlocks,
                bytes,
                maxDonorCandidates,
                gain,
                ratio,
                ttl,
                transfer,
                abandon,
                maxInflightPerDonor,
                maxInflightPerTarget);
        for (String violation : s.violations()) {
            int colon = violation.indexOf(':');
            String field = colon < 0 ? "" : violation.substring(0, colon);
            String message =
                    colon < 0 ? violation : violation.substring(colon + 1).strip();
            if (errors.getFieldType(field) != null) {
                // a value that could not be read already says so; its placeholder breaks no rule worth showing
                if (!errors.hasFieldErrors(field)) {
                    errors.rejectValue(field, "settings.invalid", inUnits(field, message));
                }
            } else {
                errors.reject("settings.invalid", violation);
            }
        }
        return errors.hasErrors() ? null : s;
    }

    private static <T> T read(
            BindingResult errors, String field, @Nullable String text, Function<String, T> parse, T fallback) {
        try {
            return parse.apply(String.valueOf(text));
        } catch (IllegalArgumentException | ArithmeticException e) {
            errors.rejectValue(field, "settings.unit", String.valueOf(e.getMessage()));
            return fallback;
        }
    }

    /** A range rule's message in the unit the field is typed in, e.g. "must be between 100 ms and 10 min". */
    static String inUnits(String field, String message) {
        Matcher m = RANGE.matcher(message);
        if (!m.matches()) {
            return message;
        }
        double min = Double.parseDouble(m.group(1));
        double max = Double.parseDouble(m.group(2));
        return switch (field) {
            case "maxFetchBytes" ->
                "must be between " + HumanUnits.bytes((long) min) + " and " + HumanUnits.bytes((long) max);
            case "minGainMs", "leaseTtlMs", "transferDeadlineMs", "abandonDeadlineMs" ->
                "must be between " + HumanUnits.millis(min) + " and " + HumanUnits.millis(max);
            case "minGainRatio" -> message + " (" + HumanUnits.percent(min) + " to " + HumanUnits.percent(max) + ")";
            default -> message;
        };
    }

    private static final Pattern RANGE = Pattern.compile("must be between ([0-9.]+) and ([0-9.]+)");

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean v) {
        enabled = v;
    }

    public boolean isAllowMnnvl() {
        return allowMnnvl;
    }

    public void setAllowMnnvl(boolean v) {
        allowMnnvl = v;
    }

    public @Nullable Integer getMinFetchBlocks() {
        return minFetchBlocks;
    }

    public void setMinFetchBlocks(@Nullable Integer v) {
        minFetchBlocks = v;
    }

    public @Nullable Integer getMaxFetchBlocks() {
        return maxFetchBlocks;
    }

    public void setMaxFetchBlocks(@Nullable Integer v) {
        maxFetchBlocks = v;
    }

    public @Nullable String getMaxFetchBytes() {
        return maxFetchBytes;
    }

    public void setMaxFetchBytes(@Nullable String v) {
        maxFetchBytes = v;
    }

    public @Nullable Integer getMaxDonorCandidates() {
        return maxDonorCandidates;
    }

    public void setMaxDonorCandidates(@Nullable Integer v) {
        maxDonorCandidates = v;
    }

    public @Nullable String getMinGainMs() {
        return minGainMs;
    }

    public void setMinGainMs(@Nullable String v) {
        minGainMs = v;
    }

    public @Nullable String getMinGainRatio() {
        return minGainRatio;
    }

    public void setMinGainRatio(@Nullable String v) {
        minGainRatio = v;
    }

    public @Nullable String getLeaseTtlMs() {
        return leaseTtlMs;
    }

    public void setLeaseTtlMs(@Nullable String v) {
        leaseTtlMs = v;
    }

    public @Nullable String getTransferDeadlineMs() {
        return transferDeadlineMs;
    }

    public void setTransferDeadlineMs(@Nullable String v) {
        transferDeadlineMs = v;
    }

    public @Nullable String getAbandonDeadlineMs() {
        return abandonDeadlineMs;
    }

    public void setAbandonDeadlineMs(@Nullable String v) {
        abandonDeadlineMs = v;
    }

    public @Nullable Integer getMaxInflightPerDonor() {
        return maxInflightPerDonor;
    }

    public void setMaxInflightPerDonor(@Nullable Integer v) {
        maxInflightPerDonor = v;
    }

    public @Nullable Integer getMaxInflightPerTarget() {
        return maxInflightPerTarget;
    }

    public void setMaxInflightPerTarget(@Nullable Integer v) {
        maxInflightPerTarget = v;
    }

    public @Nullable Long getVersion() {
        return version;
    }

    public void setVersion(@Nullable Long v) {
        version = v;
    }

    public String getReason() {
        return reason;
    }

    public void setReason(String v) {
        reason = v;
    }

    public String getConfirmation() {
        return confirmation;
    }

    public void setConfirmation(String v) {
        confirmation = v;
    }
}
