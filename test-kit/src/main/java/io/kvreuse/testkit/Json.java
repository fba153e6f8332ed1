package io.kvreuse.testkit;

import tools.jackson.databind.json.JsonMapper;

/** The one JSON mapper of the kit, shared by the client and its answers. */
public final class Json {

    /** Plain Jackson defaults, as the control plane's clients see its JSON. */
    public static final JsonMapper MAPPER = JsonMapper.builder().build();

    private Json() {}
}
