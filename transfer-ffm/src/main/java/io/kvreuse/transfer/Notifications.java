package io.kvreuse.transfer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Drains an agent's notifications through one reusable NIXL notification map (agent thread only). */
final class Notifications {

    private final AgentContext ctx;
    private @Nullable NativeHandle map;

    Notifications(AgentContext ctx) {
        this.ctx = ctx;
    }

    List<Notification> take() {
        MemorySegment notifMap = map().pointer("get_notifs");
        NixlStatus.check(
                ctx.capi.getNotifs(ctx.agent("get_notifs"), notifMap, MemorySegment.NULL),
                "get_notifs",
                ctx.describe());
        try (Arena temp = Arena.ofConfined()) {
            return copyOut(temp, notifMap);
        } finally {
            ctx.capi.notifMapClear(notifMap);
        }
    }

    /** The map's strings and blobs are borrowed: copy them before the map is cleared. */
    private List<Notification> copyOut(Arena temp, MemorySegment notifMap) {
        MemorySegment size = temp.allocate(JAVA_LONG);
        MemorySegment pointer = temp.allocate(ADDRESS);
        check(ctx.capi.notifMapSize(notifMap, size), "notif_map_size");
        List<Notification> result = new ArrayList<>();
        long agents = size.get(JAVA_LONG, 0);
        for (long i = 0; i < agents; i++) {
            check(ctx.capi.notifMapGetAgentAt(notifMap, i, pointer), "notif_map_get_agent_at");
            MemorySegment name = pointer.get(ADDRESS, 0);
            String sender = name.reinterpret(Long.MAX_VALUE).getString(0);
            check(ctx.capi.notifMapGetNotifsSize(notifMap, name, size), "notif_map_get_notifs_size");
            long count = size.get(JAVA_LONG, 0);
            for (long j = 0; j < count; j++) {
                check(ctx.capi.notifMapGetNotif(notifMap, name, j, pointer, size), "notif_map_get_notif");
                byte[] message = pointer.get(ADDRESS, 0)
                        .reinterpret(size.get(JAVA_LONG, 0))
                        .toArray(JAVA_BYTE);
                result.add(new Notification(sender, message));
            }
        }
        return result;
    }

    private void check(int code, String operation) {
        NixlStatus.check(code, operation, ctx.describe());
    }

    private NativeHandle map() {
        if (map == null) {
            map = NativeHandle.create(
                    "notification map of " + ctx.describe(),
                    (arena, out) -> check(ctx.capi.createNotifMap(out), "create_notif_map"),
                    pointer -> check(ctx.capi.destroyNotifMap(pointer), "destroy_notif_map"));
        }
        return map;
    }

    void close() {
        if (map != null) {
            map.close();
        }
    }
}
