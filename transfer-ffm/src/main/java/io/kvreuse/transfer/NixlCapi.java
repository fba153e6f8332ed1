package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import org.jspecify.annotations.Nullable;

/**
 * Raw downcalls to one loaded NIXL C library. The method handles are address-less and live in
 * {@code static final} fields, so they are linked once per JVM and constant-folded by the JIT; each
 * instance holds the {@link SymbolLookup} of one library and passes its resolved symbol addresses.
 * Only the agent's own thread calls these methods.
 */
final class NixlCapi {

    /** {@code nixl_capi_agent_config_t}: 40 bytes, 8-byte aligned. */
    static final StructLayout AGENT_CONFIG = MemoryLayout.structLayout(
            JAVA_BOOLEAN.withName("enable_prog_thread"),
            JAVA_BOOLEAN.withName("enable_listen_thread"),
            MemoryLayout.paddingLayout(2),
            JAVA_INT.withName("listen_port"),
            JAVA_INT.withName("thread_sync"),
            JAVA_INT.withName("num_workers"),
            JAVA_LONG.withName("pthr_delay_us"),
            JAVA_LONG.withName("lthr_delay_us"),
            JAVA_BOOLEAN.withName("capture_telemetry"),
            MemoryLayout.paddingLayout(7));

    /** {@code struct nixl_capi_xfer_telemetry_s}: five u64 fields. */
    static final StructLayout TELEMETRY = MemoryLayout.structLayout(
            JAVA_LONG.withName("start_time_us"),
            JAVA_LONG.withName("post_duration_us"),
            JAVA_LONG.withName("xfer_duration_us"),
            JAVA_LONG.withName("total_bytes"),
            JAVA_LONG.withName("desc_count"));

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle FREE =
            LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("free"), FunctionDescriptor.ofVoid(ADDRESS));

    private static final MethodHandle CREATE_CONFIGURED_AGENT = link(NixlFunction.CREATE_CONFIGURED_AGENT);
    private static final MethodHandle DESTROY_AGENT = link(NixlFunction.DESTROY_AGENT);
    private static final MethodHandle CREATE_PARAMS = link(NixlFunction.CREATE_PARAMS);
    private static final MethodHandle PARAMS_ADD = link(NixlFunction.PARAMS_ADD);
    private static final MethodHandle DESTROY_PARAMS = link(NixlFunction.DESTROY_PARAMS);
    private static final MethodHandle CREATE_BACKEND = link(NixlFunction.CREATE_BACKEND);
    private static final MethodHandle DESTROY_BACKEND = link(NixlFunction.DESTROY_BACKEND);
    private static final MethodHandle CREATE_OPT_ARGS = link(NixlFunction.CREATE_OPT_ARGS);
    private static final MethodHandle DESTROY_OPT_ARGS = link(NixlFunction.DESTROY_OPT_ARGS);
    private static final MethodHandle OPT_ARGS_SET_NOTIF_MSG = link(NixlFunction.OPT_ARGS_SET_NOTIF_MSG);
    private static final MethodHandle OPT_ARGS_SET_HAS_NOTIF = link(NixlFunction.OPT_ARGS_SET_HAS_NOTIF);
    private static final MethodHandle CREATE_XFER_DLIST = link(NixlFunction.CREATE_XFER_DLIST);
    private static final MethodHandle XFER_DLIST_ADD_DESC = link(NixlFunction.XFER_DLIST_ADD_DESC);
    private static final MethodHandle DESTROY_XFER_DLIST = link(NixlFunction.DESTROY_XFER_DLIST);
    private static final MethodHandle CREATE_REG_DLIST = link(NixlFunction.CREATE_REG_DLIST);
    private static final MethodHandle REG_DLIST_ADD_DESC = link(NixlFunction.REG_DLIST_ADD_DESC);
    private static final MethodHandle DESTROY_REG_DLIST = link(NixlFunction.DESTROY_REG_DLIST);
    private static final MethodHandle REGISTER_MEM = link(NixlFunction.REGISTER_MEM);
    private static final MethodHandle DEREGISTER_MEM = link(NixlFunction.DEREGISTER_MEM);
    private static final MethodHandle GET_LOCAL_MD = link(NixlFunction.GET_LOCAL_MD);
    private static final MethodHandle LOAD_REMOTE_MD = link(NixlFunction.LOAD_REMOTE_MD);
    private static final MethodHandle INVALIDATE_REMOTE_MD = link(NixlFunction.INVALIDATE_REMOTE_MD);
    private static final MethodHandle CHECK_REMOTE_MD = link(NixlFunction.CHECK_REMOTE_MD);
    private static final MethodHandle PREP_XFER_DLIST = link(NixlFunction.PREP_XFER_DLIST);
    private static final MethodHandle RELEASE_XFER_DLIST_HANDLE = link(NixlFunction.RELEASE_XFER_DLIST_HANDLE);
    private static final MethodHandle MAKE_XFER_REQ = link(NixlFunction.MAKE_XFER_REQ);
    private static final MethodHandle CREATE_XFER_REQ = link(NixlFunction.CREATE_XFER_REQ);
    private static final MethodHandle POST_XFER_REQ = link(NixlFunction.POST_XFER_REQ);
    private static final MethodHandle GET_XFER_STATUS = link(NixlFunction.GET_XFER_STATUS);
    private static final MethodHandle RELEASE_XFER_REQ = link(NixlFunction.RELEASE_XFER_REQ);
    private static final MethodHandle DESTROY_XFER_REQ = link(NixlFunction.DESTROY_XFER_REQ);
    private static final MethodHandle GET_XFER_TELEMETRY = link(NixlFunction.GET_XFER_TELEMETRY);
    private static final MethodHandle CREATE_NOTIF_MAP = link(NixlFunction.CREATE_NOTIF_MAP);
    private static final MethodHandle DESTROY_NOTIF_MAP = link(NixlFunction.DESTROY_NOTIF_MAP);
    private static final MethodHandle NOTIF_MAP_CLEAR = link(NixlFunction.NOTIF_MAP_CLEAR);
    private static final MethodHandle GET_NOTIFS = link(NixlFunction.GET_NOTIFS);
    private static final MethodHandle GEN_NOTIF = link(NixlFunction.GEN_NOTIF);
    private static final MethodHandle NOTIF_MAP_SIZE = link(NixlFunction.NOTIF_MAP_SIZE);
    private static final MethodHandle NOTIF_MAP_GET_AGENT_AT = link(NixlFunction.NOTIF_MAP_GET_AGENT_AT);
    private static final MethodHandle NOTIF_MAP_GET_NOTIFS_SIZE = link(NixlFunction.NOTIF_MAP_GET_NOTIFS_SIZE);
    private static final MethodHandle NOTIF_MAP_GET_NOTIF = link(NixlFunction.NOTIF_MAP_GET_NOTIF);

    /** The emulator's report of the lane a request took; real NIXL libraries do not have it. */
    private static final MethodHandle EMULATOR_XFER_LANE =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));

    private static final String EMULATOR_LANE_SYMBOL = "kvreuse_emu_xfer_lane";

    /** Kept for the library's lifetime; its symbols are resolved once into {@link #symbols}. */
    private final SymbolLookup lookup;

    private final MemorySegment[] symbols;
    private final @Nullable MemorySegment laneSymbol;

    /** The caller has checked that every {@link NixlFunction} resolves in {@code lookup}. */
    NixlCapi(SymbolLookup lookup) {
        this.lookup = lookup;
        NixlFunction[] functions = NixlFunction.values();
        this.symbols = new MemorySegment[functions.length];
        for (NixlFunction function : functions) {
            symbols[function.ordinal()] = this.lookup.findOrThrow(function.symbol());
        }
        this.laneSymbol = lookup.find(EMULATOR_LANE_SYMBOL).orElse(null);
    }

    /** The lane code the library reports for a posted request, or -1 when it reports none (real NIXL). */
    int reportedLane(MemorySegment request) {
        if (laneSymbol == null) {
            return -1;
        }
        try {
            return (int) EMULATOR_XFER_LANE.invokeExact(laneSymbol, request);
        } catch (Throwable t) {
            throw new IllegalStateException("downcall " + EMULATOR_LANE_SYMBOL + " failed", t);
        }
    }

    private static MethodHandle link(NixlFunction function) {
        return LINKER.downcallHandle(function.descriptor());
    }

    private MemorySegment at(NixlFunction function) {
        return symbols[function.ordinal()];
    }

    /** A failed downcall is a JVM-level problem (bad linkage), never a NIXL status. */
    private static IllegalStateException linkageFailure(NixlFunction function, Throwable cause) {
        return new IllegalStateException("downcall " + function.symbol() + " failed", cause);
    }

    /** Frees a buffer NIXL allocated with malloc/strdup. */
    static void free(MemorySegment pointer) {
        try {
            FREE.invokeExact(pointer);
        } catch (Throwable t) {
            throw new IllegalStateException("downcall free failed", t);
        }
    }

    int createConfiguredAgent(MemorySegment name, MemorySegment config, MemorySegment agentOut) {
        try {
            return (int) CREATE_CONFIGURED_AGENT.invokeExact(
                    at(NixlFunction.CREATE_CONFIGURED_AGENT), name, config, agentOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_CONFIGURED_AGENT, t);
        }
    }

    int destroyAgent(MemorySegment agent) {
        try {
            return (int) DESTROY_AGENT.invokeExact(at(NixlFunction.DESTROY_AGENT), agent);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_AGENT, t);
        }
    }

    int createParams(MemorySegment paramsOut) {
        try {
            return (int) CREATE_PARAMS.invokeExact(at(NixlFunction.CREATE_PARAMS), paramsOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_PARAMS, t);
        }
    }

    int paramsAdd(MemorySegment params, MemorySegment key, MemorySegment value) {
        try {
            return (int) PARAMS_ADD.invokeExact(at(NixlFunction.PARAMS_ADD), params, key, value);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.PARAMS_ADD, t);
        }
    }

    int destroyParams(MemorySegment params) {
        try {
            return (int) DESTROY_PARAMS.invokeExact(at(NixlFunction.DESTROY_PARAMS), params);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_PARAMS, t);
        }
    }

    int createBackend(MemorySegment agent, MemorySegment plugin, MemorySegment params, MemorySegment backendOut) {
        try {
            return (int) CREATE_BACKEND.invokeExact(at(NixlFunction.CREATE_BACKEND), agent, plugin, params, backendOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_BACKEND, t);
        }
    }

    int destroyBackend(MemorySegment backend) {
        try {
            return (int) DESTROY_BACKEND.invokeExact(at(NixlFunction.DESTROY_BACKEND), backend);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_BACKEND, t);
        }
    }

    int createOptArgs(MemorySegment argsOut) {
        try {
            return (int) CREATE_OPT_ARGS.invokeExact(at(NixlFunction.CREATE_OPT_ARGS), argsOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_OPT_ARGS, t);
        }
    }

    int destroyOptArgs(MemorySegment args) {
        try {
            return (int) DESTROY_OPT_ARGS.invokeExact(at(NixlFunction.DESTROY_OPT_ARGS), args);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_OPT_ARGS, t);
        }
    }

    int optArgsSetNotifMsg(MemorySegment args, MemorySegment data, long length) {
        try {
            return (int)
                    OPT_ARGS_SET_NOTIF_MSG.invokeExact(at(NixlFunction.OPT_ARGS_SET_NOTIF_MSG), args, data, length);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.OPT_ARGS_SET_NOTIF_MSG, t);
        }
    }

    int optArgsSetHasNotif(MemorySegment args, boolean hasNotif) {
        try {
            return (int) OPT_ARGS_SET_HAS_NOTIF.invokeExact(at(NixlFunction.OPT_ARGS_SET_HAS_NOTIF), args, hasNotif);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.OPT_ARGS_SET_HAS_NOTIF, t);
        }
    }

    int createXferDlist(int memType, MemorySegment dlistOut) {
        try {
            return (int) CREATE_XFER_DLIST.invokeExact(at(NixlFunction.CREATE_XFER_DLIST), memType, dlistOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_XFER_DLIST, t);
        }
    }

    int xferDlistAddDesc(MemorySegment dlist, long address, long length, long devId) {
        try {
            return (int) XFER_DLIST_ADD_DESC.invokeExact(
                    at(NixlFunction.XFER_DLIST_ADD_DESC), dlist, address, length, devId);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.XFER_DLIST_ADD_DESC, t);
        }
    }

    int destroyXferDlist(MemorySegment dlist) {
        try {
            return (int) DESTROY_XFER_DLIST.invokeExact(at(NixlFunction.DESTROY_XFER_DLIST), dlist);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_XFER_DLIST, t);
        }
    }

    int createRegDlist(int memType, MemorySegment dlistOut) {
        try {
            return (int) CREATE_REG_DLIST.invokeExact(at(NixlFunction.CREATE_REG_DLIST), memType, dlistOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_REG_DLIST, t);
        }
    }

    int regDlistAddDesc(
            MemorySegment dlist, long address, long length, long devId, MemorySegment metadata, long metadataLength) {
        try {
            return (int) REG_DLIST_ADD_DESC.invokeExact(
                    at(NixlFunction.REG_DLIST_ADD_DESC), dlist, address, length, devId, metadata, metadataLength);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.REG_DLIST_ADD_DESC, t);
        }
    }

    int destroyRegDlist(MemorySegment dlist) {
        try {
            return (int) DESTROY_REG_DLIST.invokeExact(at(NixlFunction.DESTROY_REG_DLIST), dlist);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_REG_DLIST, t);
        }
    }

    int registerMem(MemorySegment agent, MemorySegment dlist, MemorySegment optArgs) {
        try {
            return (int) REGISTER_MEM.invokeExact(at(NixlFunction.REGISTER_MEM), agent, dlist, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.REGISTER_MEM, t);
        }
    }

    int deregisterMem(MemorySegment agent, MemorySegment dlist, MemorySegment optArgs) {
        try {
            return (int) DEREGISTER_MEM.invokeExact(at(NixlFunction.DEREGISTER_MEM), agent, dlist, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DEREGISTER_MEM, t);
        }
    }

    int getLocalMd(MemorySegment agent, MemorySegment dataOut, MemorySegment lengthOut) {
        try {
            return (int) GET_LOCAL_MD.invokeExact(at(NixlFunction.GET_LOCAL_MD), agent, dataOut, lengthOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.GET_LOCAL_MD, t);
        }
    }

    int loadRemoteMd(MemorySegment agent, MemorySegment data, long length, MemorySegment nameOut) {
        try {
            return (int) LOAD_REMOTE_MD.invokeExact(at(NixlFunction.LOAD_REMOTE_MD), agent, data, length, nameOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.LOAD_REMOTE_MD, t);
        }
    }

    int invalidateRemoteMd(MemorySegment agent, MemorySegment remoteName) {
        try {
            return (int) INVALIDATE_REMOTE_MD.invokeExact(at(NixlFunction.INVALIDATE_REMOTE_MD), agent, remoteName);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.INVALIDATE_REMOTE_MD, t);
        }
    }

    int checkRemoteMd(MemorySegment agent, MemorySegment remoteName, MemorySegment dlist) {
        try {
            return (int) CHECK_REMOTE_MD.invokeExact(at(NixlFunction.CHECK_REMOTE_MD), agent, remoteName, dlist);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CHECK_REMOTE_MD, t);
        }
    }

    int prepXferDlist(
            MemorySegment agent,
            MemorySegment agentName,
            MemorySegment dlist,
            MemorySegment handleOut,
            MemorySegment optArgs) {
        try {
            return (int) PREP_XFER_DLIST.invokeExact(
                    at(NixlFunction.PREP_XFER_DLIST), agent, agentName, dlist, handleOut, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.PREP_XFER_DLIST, t);
        }
    }

    int releaseXferDlistHandle(MemorySegment agent, MemorySegment handle) {
        try {
            return (int)
                    RELEASE_XFER_DLIST_HANDLE.invokeExact(at(NixlFunction.RELEASE_XFER_DLIST_HANDLE), agent, handle);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.RELEASE_XFER_DLIST_HANDLE, t);
        }
    }

    int makeXferReq(
            MemorySegment agent,
            int op,
            MemorySegment localHandle,
            MemorySegment localIndices,
            long localCount,
            MemorySegment remoteHandle,
            MemorySegment remoteIndices,
            long remoteCount,
            MemorySegment requestOut,
            MemorySegment optArgs) {
        try {
            return (int) MAKE_XFER_REQ.invokeExact(
                    at(NixlFunction.MAKE_XFER_REQ),
                    agent,
                    op,
                    localHandle,
                    localIndices,
                    localCount,
                    remoteHandle,
                    remoteIndices,
                    remoteCount,
                    requestOut,
                    optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.MAKE_XFER_REQ, t);
        }
    }

    int createXferReq(
            MemorySegment agent,
            int op,
            MemorySegment localDlist,
            MemorySegment remoteDlist,
            MemorySegment remoteName,
            MemorySegment requestOut,
            MemorySegment optArgs) {
        try {
            return (int) CREATE_XFER_REQ.invokeExact(
                    at(NixlFunction.CREATE_XFER_REQ),
                    agent,
                    op,
                    localDlist,
                    remoteDlist,
                    remoteName,
                    requestOut,
                    optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_XFER_REQ, t);
        }
    }

    int postXferReq(MemorySegment agent, MemorySegment request, MemorySegment optArgs) {
        try {
            return (int) POST_XFER_REQ.invokeExact(at(NixlFunction.POST_XFER_REQ), agent, request, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.POST_XFER_REQ, t);
        }
    }

    int getXferStatus(MemorySegment agent, MemorySegment request) {
        try {
            return (int) GET_XFER_STATUS.invokeExact(at(NixlFunction.GET_XFER_STATUS), agent, request);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.GET_XFER_STATUS, t);
        }
    }

    int releaseXferReq(MemorySegment agent, MemorySegment request) {
        try {
            return (int) RELEASE_XFER_REQ.invokeExact(at(NixlFunction.RELEASE_XFER_REQ), agent, request);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.RELEASE_XFER_REQ, t);
        }
    }

    int destroyXferReq(MemorySegment request) {
        try {
            return (int) DESTROY_XFER_REQ.invokeExact(at(NixlFunction.DESTROY_XFER_REQ), request);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_XFER_REQ, t);
        }
    }

    int getXferTelemetry(MemorySegment agent, MemorySegment request, MemorySegment telemetryOut) {
        try {
            return (int)
                    GET_XFER_TELEMETRY.invokeExact(at(NixlFunction.GET_XFER_TELEMETRY), agent, request, telemetryOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.GET_XFER_TELEMETRY, t);
        }
    }

    int createNotifMap(MemorySegment mapOut) {
        try {
            return (int) CREATE_NOTIF_MAP.invokeExact(at(NixlFunction.CREATE_NOTIF_MAP), mapOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.CREATE_NOTIF_MAP, t);
        }
    }

    int destroyNotifMap(MemorySegment map) {
        try {
            return (int) DESTROY_NOTIF_MAP.invokeExact(at(NixlFunction.DESTROY_NOTIF_MAP), map);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.DESTROY_NOTIF_MAP, t);
        }
    }

    int notifMapClear(MemorySegment map) {
        try {
            return (int) NOTIF_MAP_CLEAR.invokeExact(at(NixlFunction.NOTIF_MAP_CLEAR), map);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.NOTIF_MAP_CLEAR, t);
        }
    }

    int getNotifs(MemorySegment agent, MemorySegment map, MemorySegment optArgs) {
        try {
            return (int) GET_NOTIFS.invokeExact(at(NixlFunction.GET_NOTIFS), agent, map, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.GET_NOTIFS, t);
        }
    }

    int genNotif(
            MemorySegment agent, MemorySegment remoteName, MemorySegment data, long length, MemorySegment optArgs) {
        try {
            return (int) GEN_NOTIF.invokeExact(at(NixlFunction.GEN_NOTIF), agent, remoteName, data, length, optArgs);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.GEN_NOTIF, t);
        }
    }

    int notifMapSize(MemorySegment map, MemorySegment sizeOut) {
        try {
            return (int) NOTIF_MAP_SIZE.invokeExact(at(NixlFunction.NOTIF_MAP_SIZE), map, sizeOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.NOTIF_MAP_SIZE, t);
        }
    }

    int notifMapGetAgentAt(MemorySegment map, long index, MemorySegment nameOut) {
        try {
            return (int)
                    NOTIF_MAP_GET_AGENT_AT.invokeExact(at(NixlFunction.NOTIF_MAP_GET_AGENT_AT), map, index, nameOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.NOTIF_MAP_GET_AGENT_AT, t);
        }
    }

    int notifMapGetNotifsSize(MemorySegment map, MemorySegment agentName, MemorySegment sizeOut) {
        try {
            return (int) NOTIF_MAP_GET_NOTIFS_SIZE.invokeExact(
                    at(NixlFunction.NOTIF_MAP_GET_NOTIFS_SIZE), map, agentName, sizeOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.NOTIF_MAP_GET_NOTIFS_SIZE, t);
        }
    }

    int notifMapGetNotif(
            MemorySegment map, MemorySegment agentName, long index, MemorySegment dataOut, MemorySegment lengthOut) {
        try {
            return (int) NOTIF_MAP_GET_NOTIF.invokeExact(
                    at(NixlFunction.NOTIF_MAP_GET_NOTIF), map, agentName, index, dataOut, lengthOut);
        } catch (Throwable t) {
            throw linkageFailure(NixlFunction.NOTIF_MAP_GET_NOTIF, t);
        }
    }
}
