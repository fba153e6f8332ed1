package io.kvreuse.error;

import java.util.List;

/** The answer to a batch request: one result or problem per item, in the order of the request. */
public record BatchResults<T>(List<ItemResult<T>> results) {}
