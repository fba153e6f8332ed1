package io.kvreuse.protocol;

import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The syntax of an engine's memory region reference, the same on both sides of the wire: only the
 * schemes node agents import, each in its one exact form, so a reference can name neither a file
 * outside the agent's shared-memory directory nor anything but one exported region.
 *
 * <ul>
 *   <li>{@code shm://<name>}: a host-memory region of the NIXL emulator, {@code /dev/shm/kvreuse-<name>};
 *       the name is 1-200 of {@code [A-Za-z0-9._-]}, starting with a letter or digit, without
 *       {@code ..};
 *   <li>{@code cuda-ipc://<gpuOrdinal>/<handle>?size=<bytes>}: a CUDA IPC export, the handle its 64
 *       bytes in URL-safe base64, the size a positive decimal.
 * </ul>
 */
public final class RegionRef {

    private static final Pattern SHM = Pattern.compile("shm://[A-Za-z0-9][A-Za-z0-9._-]{0,199}");

    private static final Pattern CUDA_IPC =
            Pattern.compile("cuda-ipc://[0-9]{1,4}/[A-Za-z0-9_-]{86}(==)?\\?size=[1-9][0-9]{0,18}");

    private RegionRef() {}

    /** Why {@code ref} is not a region reference an agent imports, or null when it is one. */
    public static @Nullable String problem(@Nullable String ref) {
        if (ref == null || ref.isEmpty()) {
            return "a region reference is required";
        }
        if (SHM.matcher(ref).matches()) {
            return ref.contains("..") ? "a shm:// name must not contain '..'" : null;
        }
        if (CUDA_IPC.matcher(ref).matches()) {
            return null;
        }
        if (ref.startsWith("shm://") || ref.startsWith("cuda-ipc://")) {
            return "malformed region reference: shm://<name of [A-Za-z0-9._-]> or"
                    + " cuda-ipc://<gpu>/<base64url handle>?size=<bytes>";
        }
        return "region references use the schemes shm:// or cuda-ipc:// only";
    }
}
