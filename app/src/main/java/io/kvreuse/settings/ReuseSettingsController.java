package io.kvreuse.settings;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** GET and PUT of the whole reuse-settings document (operators write; any role reads). */
@RestController
@RequestMapping("/api/v1/settings/reuse")
class ReuseSettingsController {

    private final ReuseSettingsService settings;

    ReuseSettingsController(ReuseSettingsService settings) {
        this.settings = settings;
    }

    @Operation(operationId = "getReuseSettings", summary = "Read the reuse settings (any role)")
    @GetMapping
    @ApiResponse(
            responseCode = "200",
            description = "the current reuse settings",
            content = @Content(schema = @Schema(implementation = SettingsSchema.class)))
    Mono<Map<String, Object>> get() {
        return settings.read().map(SettingsDocument::render);
    }

    /** The optional {@code X-Change-Reason} header is written to the audit trail. */
    @Operation(operationId = "putReuseSettings", summary = "Replace the reuse settings, audited (OPERATOR)")
    @ProblemResponse({ProblemType.UNKNOWN_SETTING, ProblemType.INVALID_SETTINGS})
    @ProblemResponse(
            value = {ProblemType.SETTINGS_VERSION_CONFLICT},
            note =
                    "someone changed the settings since the version the document names: read them again and reapply the edit")
    @PutMapping
    @ApiResponse(
            responseCode = "200",
            description = "the settings as stored, with the new version",
            content = @Content(schema = @Schema(implementation = SettingsSchema.class)))
    Mono<Map<String, Object>> put(
            @io.swagger.v3.oas.annotations.parameters.RequestBody(
                            description = "the whole settings document, as GET returns it",
                            content = @Content(schema = @Schema(implementation = SettingsSchema.class)))
                    @RequestBody(required = false)
                    @Nullable
                    JsonNode body,
            @RequestHeader(name = "X-Change-Reason", required = false) @Nullable String reason) {
        SettingsDocument.Parsed parsed = SettingsDocument.parse(body);
        return CurrentPrincipal.get()
                .flatMap(p -> settings.replace(parsed.settings(), parsed.expectedVersion(), p.actor(), reason))
                .map(SettingsDocument::render);
    }
}
