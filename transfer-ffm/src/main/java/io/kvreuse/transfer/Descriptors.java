package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/** Builds NIXL descriptor lists; each descriptor is one downcall, so callers build lists once. */
final class Descriptors {

    private Descriptors() {}

    /** A registration list with one region; the caller destroys it. */
    static MemorySegment regList(NixlCapi capi, Arena temp, MemoryKind kind, long address, long length, long devId) {
        MemorySegment out = temp.allocate(ADDRESS);
        NixlStatus.check(capi.createRegDlist(kind.code(), out), "create_reg_dlist", "registration");
        MemorySegment list = out.get(ADDRESS, 0);
        int code = capi.regDlistAddDesc(list, address, length, devId, MemorySegment.NULL, 0);
        if (code != NixlStatus.SUCCESS) {
            capi.destroyRegDlist(list);
            NixlStatus.check(code, "reg_dlist_add_desc", "registration");
        }
        return list;
    }

    /** The span descriptors of {@link BlockGeometry}, level by level, in {@code spanIndex} order. */
    static MemorySegment blockList(NixlCapi capi, Arena temp, BlockGeometry geometry) {
        MemorySegment list = emptyList(capi, temp, geometry.kind());
        for (int level = 0; level < geometry.levels(); level++) {
            int span = 1 << level;
            long length = span * geometry.bytesPerBlock();
            for (int block = 0; block + span <= geometry.blockCount(); block++) {
                add(capi, list, geometry.blockAddress(block), length, geometry.devId());
            }
        }
        return list;
    }

    /** One descriptor per run: a run of consecutive blocks is contiguous, so it needs only one. */
    static MemorySegment runList(NixlCapi capi, Arena temp, BlockGeometry geometry, List<SlotRun> runs, boolean local) {
        MemorySegment list = emptyList(capi, temp, geometry.kind());
        for (SlotRun run : runs) {
            int first = local ? run.localBlock() : run.remoteBlock();
            add(
                    capi,
                    list,
                    geometry.blockAddress(first),
                    run.blockCount() * geometry.bytesPerBlock(),
                    geometry.devId());
        }
        return list;
    }

    private static MemorySegment emptyList(NixlCapi capi, Arena temp, MemoryKind kind) {
        MemorySegment out = temp.allocate(ADDRESS);
        NixlStatus.check(capi.createXferDlist(kind.code(), out), "create_xfer_dlist", "descriptor list");
        return out.get(ADDRESS, 0);
    }

    private static void add(NixlCapi capi, MemorySegment list, long address, long length, long devId) {
        int code = capi.xferDlistAddDesc(list, address, length, devId);
        if (code != NixlStatus.SUCCESS) {
            capi.destroyXferDlist(list);
            NixlStatus.check(code, "xfer_dlist_add_desc", "descriptor list");
        }
    }
}
