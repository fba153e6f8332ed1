package io.kvreuse.admin;

import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.StoredSettings;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import org.jspecify.annotations.Nullable;
import org.springframework.validation.BindingResult;

/**
 * The settings form: every field of the reuse settings, the version the operator edited (so a
 * concurrent change is refused, not overwritten) and an optional reason for the audit trail. The
 * range rules are the settings' own ({@link ReuseSettings#violations()}).
 */
class SettingsForm {

    private boolean enabled;
    private boolean allowMnnvl;
    private @NotNull @Nullable Integer minFetchBlocks;
    private @NotNull @Nullable Integer maxFetchBlocks;
    private @NotNull @Nullable Long maxFetchBytes;
    private @NotNull @Nullable Integer maxDonorCandidates;
    private @NotNull @Nullable Double minGainMs;
    private @NotNull @Nullable Double minGainRatio;
    private @NotNull @Nullable Long leaseTtlMs;
    private @NotNull @Nullable Long transferDeadlineMs;
    private @NotNull @Nullable Long abandonDeadlineMs;
    private @NotNull @Nullable Integer maxInflightPerDonor;
    private @NotNull @Nullable Integer maxInflightPerTarget;
    private @NotNull @Nullable Long version;
    private @Size(max = 1000) String reason = "";

    static SettingsForm of(StoredSettings stored) {
        ReuseSettings s = stored.settings();
        SettingsForm f = new SettingsForm();
        f.enabled = s.enabled();
        f.allowMnnvl = s.allowMnnvl();
        f.minFetchBlocks = s.minFetchBlocks();
        f.maxFetchBlocks = s.maxFetchBlocks();
        f.maxFetchBytes = s.maxFetchBytes();
        f.maxDonorCandidates = s.maxDonorCandidates();
        f.minGainMs = s.minGainMs();
        f.minGainRatio = s.minGainRatio();
        f.leaseTtlMs = s.leaseTtlMs();
        f.transferDeadlineMs = s.transferDeadlineMs();
        f.abandonDeadlineMs = s.abandonDeadlineMs();
        f.maxInflightPerDonor = s.maxInflightPerDonor();
        f.maxInflightPerTarget = s.maxInflightPerTarget();
        f.version = stored.version();
        return f;
    }

    /** The settings, or null with every broken rule recorded against its field. */
    @Nullable
    ReuseSettings toSettings(BindingResult errors) {
        if (errors.hasErrors()) {
            return null;
        }
        ReuseSettings s = new ReuseSettings(
                enabled,
                allowMnnvl,
                minFetchBlocks,
                maxFetchBlocks,
                maxFetchBytes,
                maxDonorCandidates,
                minGainMs,
                minGainRatio,
                leaseTtlMs,
                transferDeadlineMs,
                abandonDeadlineMs,
                maxInflightPerDonor,
                maxInflightPerTarget);
        for (String violation : s.violations()) {
            int colon = violation.indexOf(':');
            String field = colon < 0 ? "" : violation.substring(0, colon);
            String message =
                    colon < 0 ? violation : violation.substring(colon + 1).strip();
            if (errors.getFieldType(field) != null) {
                errors.rejectValue(field, "settings.invalid", message);
            } else {
                errors.reject("settings.invalid", violation);
            }
        }
        return errors.hasErrors() ? null : s;
    }

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

    public @Nullable Long getMaxFetchBytes() {
        return maxFetchBytes;
    }

    public void setMaxFetchBytes(@Nullable Long v) {
        maxFetchBytes = v;
    }

    public @Nullable Integer getMaxDonorCandidates() {
        return maxDonorCandidates;
    }

    public void setMaxDonorCandidates(@Nullable Integer v) {
        maxDonorCandidates = v;
    }

    public @Nullable Double getMinGainMs() {
        return minGainMs;
    }

    public void setMinGainMs(@Nullable Double v) {
        minGainMs = v;
    }

    public @Nullable Double getMinGainRatio() {
        return minGainRatio;
    }

    public void setMinGainRatio(@Nullable Double v) {
        minGainRatio = v;
    }

    public @Nullable Long getLeaseTtlMs() {
        return leaseTtlMs;
    }

    public void setLeaseTtlMs(@Nullable Long v) {
        leaseTtlMs = v;
    }

    public @Nullable Long getTransferDeadlineMs() {
        return transferDeadlineMs;
    }

    public void setTransferDeadlineMs(@Nullable Long v) {
        transferDeadlineMs = v;
    }

    public @Nullable Long getAbandonDeadlineMs() {
        return abandonDeadlineMs;
    }

    public void setAbandonDeadlineMs(@Nullable Long v) {
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
}
