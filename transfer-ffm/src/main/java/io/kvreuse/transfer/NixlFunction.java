package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;

/**
 * The {@code nixl_capi_*} functions the agent needs, with descriptors written from NIXL's C-ABI
 * signatures (handles and pointers are addresses, enums ints, {@code size_t}/{@code uint64_t} longs).
 */
enum NixlFunction {
    CREATE_CONFIGURED_AGENT("create_configured_agent", ADDRESS, ADDRESS, ADDRESS),
    DESTROY_AGENT("destroy_agent", ADDRESS),
    CREATE_PARAMS("create_params", ADDRESS),
    PARAMS_ADD("params_add", ADDRESS, ADDRESS, ADDRESS),
    DESTROY_PARAMS("destroy_params", ADDRESS),
    CREATE_BACKEND("create_backend", ADDRESS, ADDRESS, ADDRESS, ADDRESS),
    DESTROY_BACKEND("destroy_backend", ADDRESS),
    CREATE_OPT_ARGS("create_opt_args", ADDRESS),
    DESTROY_OPT_ARGS("destroy_opt_args", ADDRESS),
    OPT_ARGS_SET_NOTIF_MSG("opt_args_set_notif_msg", ADDRESS, ADDRESS, JAVA_LONG),
    OPT_ARGS_SET_HAS_NOTIF("opt_args_set_has_notif", ADDRESS, JAVA_BOOLEAN),
    CREATE_XFER_DLIST("create_xfer_dlist", JAVA_INT, ADDRESS),
    XFER_DLIST_ADD_DESC("xfer_dlist_add_desc", ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG),
    DESTROY_XFER_DLIST("destroy_xfer_dlist", ADDRESS),
    CREATE_REG_DLIST("create_reg_dlist", JAVA_INT, ADDRESS),
    REG_DLIST_ADD_DESC("reg_dlist_add_desc", ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG),
    DESTROY_REG_DLIST("destroy_reg_dlist", ADDRESS),
    REGISTER_MEM("register_mem", ADDRESS, ADDRESS, ADDRESS),
    DEREGISTER_MEM("deregister_mem", ADDRESS, ADDRESS, ADDRESS),
    GET_LOCAL_MD("get_local_md", ADDRESS, ADDRESS, ADDRESS),
    LOAD_REMOTE_MD("load_remote_md", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS),
    INVALIDATE_REMOTE_MD("invalidate_remote_md", ADDRESS, ADDRESS),
    CHECK_REMOTE_MD("check_remote_md", ADDRESS, ADDRESS, ADDRESS),
    PREP_XFER_DLIST("prep_xfer_dlist", ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS),
    RELEASE_XFER_DLIST_HANDLE("release_xfer_dlist_handle", ADDRESS, ADDRESS),
    MAKE_XFER_REQ(
            "make_xfer_req",
            ADDRESS,
            JAVA_INT,
            ADDRESS,
            ADDRESS,
            JAVA_LONG,
            ADDRESS,
            ADDRESS,
            JAVA_LONG,
            ADDRESS,
            ADDRESS),
    CREATE_XFER_REQ("create_xfer_req", ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS),
    POST_XFER_REQ("post_xfer_req", ADDRESS, ADDRESS, ADDRESS),
    GET_XFER_STATUS("get_xfer_status", ADDRESS, ADDRESS),
    RELEASE_XFER_REQ("release_xfer_req", ADDRESS, ADDRESS),
    DESTROY_XFER_REQ("destroy_xfer_req", ADDRESS),
    GET_XFER_TELEMETRY("get_xfer_telemetry", ADDRESS, ADDRESS, ADDRESS),
    CREATE_NOTIF_MAP("create_notif_map", ADDRESS),
    DESTROY_NOTIF_MAP("destroy_notif_map", ADDRESS),
    NOTIF_MAP_CLEAR("notif_map_clear", ADDRESS),
    GET_NOTIFS("get_notifs", ADDRESS, ADDRESS, ADDRESS),
    GEN_NOTIF("gen_notif", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS),
    NOTIF_MAP_SIZE("notif_map_size", ADDRESS, ADDRESS),
    NOTIF_MAP_GET_AGENT_AT("notif_map_get_agent_at", ADDRESS, JAVA_LONG, ADDRESS),
    NOTIF_MAP_GET_NOTIFS_SIZE("notif_map_get_notifs_size", ADDRESS, ADDRESS, ADDRESS),
    NOTIF_MAP_GET_NOTIF("notif_map_get_notif", ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS);

    private final String symbol;
    private final FunctionDescriptor descriptor;

    /** Every function returns a {@code nixl_capi_status_t}, a 4-byte enum. */
    NixlFunction(String suffix, MemoryLayout... arguments) {
        this.symbol = "nixl_capi_" + suffix;
        this.descriptor = FunctionDescriptor.of(JAVA_INT, arguments);
    }

    String symbol() {
        return symbol;
    }

    FunctionDescriptor descriptor() {
        return descriptor;
    }
}
