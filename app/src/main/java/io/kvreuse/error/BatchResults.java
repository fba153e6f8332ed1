package io.kvreuse.error;

import io.swagger.v3.oas.annotations.media.Schema;
import java.util.List;

/** The answer to a batch request: one result or problem per item, in the order of the request. */
@Schema(description = "The answer to a batch request: one result or problem per item, in the order of the request")
public record BatchResults<T>(
        @Schema(description = "One entry per item") List<ItemResult<T>> results) {}
