package io.kvreuse.transfer.gpu;

import io.kvreuse.transfer.SlotRun;
import io.kvreuse.transfer.cuda.CudaIpc;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The stand-in engine process ({@code transfer-ffm/gpu/standin_engine.cu}): it owns a source bank
 * and a destination region on one GPU, exports them as CUDA IPC handles, and checks destination
 * bytes on the GPU on request. A separate process because CUDA IPC refuses to open a handle in the
 * process that exported it, as with a real engine beside the node agent.
 */
final class StandinEngine implements AutoCloseable {

    private final Process process;
    private final BufferedReader out;
    private final PrintStream in;
    private final Map<String, String> fields;

    private StandinEngine(Process process) throws IOException {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII));
        this.in = new PrintStream(process.getOutputStream(), false, StandardCharsets.US_ASCII);
        String ready = out.readLine();
        if (ready == null || !ready.startsWith("ENGINE ")) {
            process.destroyForcibly();
            throw new IllegalStateException("stand-in engine did not start: " + ready);
        }
        fields = new HashMap<>();
        for (String field : ready.substring("ENGINE ".length()).split(" ")) {
            int eq = field.indexOf('=');
            fields.put(field.substring(0, eq), field.substring(eq + 1));
        }
    }

    static StandinEngine start(Path binary, int device, long sourceBytes, long destinationBytes, long blockBytes)
            throws IOException {
        Process process = new ProcessBuilder(
                        binary.toString(),
                        Integer.toString(device),
                        Long.toString(sourceBytes),
                        Long.toString(destinationBytes),
                        Long.toString(blockBytes))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        return new StandinEngine(process);
    }

    long sourceBytes() {
        return Long.parseLong(fields.get("src_bytes"));
    }

    long destinationBytes() {
        return Long.parseLong(fields.get("dst_bytes"));
    }

    byte[] sourceHandle() {
        return handle("src_handle");
    }

    byte[] destinationHandle() {
        return handle("dst_handle");
    }

    private byte[] handle(String name) {
        byte[] handle = Base64.getUrlDecoder().decode(fields.get(name));
        if (handle.length != CudaIpc.HANDLE_BYTES) {
            throw new IllegalStateException(name + " has " + handle.length + " bytes");
        }
        return handle;
    }

    /**
     * Checks every destination byte on the GPU: the blocks the runs wrote (local = destination
     * block, remote = source block) hold the source pattern, every other block is still zero.
     * Returns the engine's answer, "OK &lt;bytes checked&gt;" or "MISMATCH &lt;offset&gt; ...".
     */
    String verify(List<SlotRun> runs) {
        StringBuilder command = new StringBuilder(16 + runs.size() * 18).append("VERIFY");
        for (SlotRun run : runs) {
            command.append(' ')
                    .append(run.localBlock())
                    .append(':')
                    .append(run.remoteBlock())
                    .append(':')
                    .append(run.blockCount());
        }
        return ask(command.toString());
    }

    /** Zeroes the destination region again. */
    void zero() {
        String answer = ask("ZERO");
        if (!answer.startsWith("OK")) {
            throw new IllegalStateException("stand-in engine could not zero its destination: " + answer);
        }
    }

    private String ask(String command) {
        in.println(command);
        in.flush();
        try {
            String answer = out.readLine();
            if (answer == null) {
                throw new IllegalStateException("stand-in engine exited (status "
                        + (process.isAlive() ? "unknown" : process.exitValue()) + ") on " + head(command));
            }
            if (answer.startsWith("ERROR")) {
                throw new IllegalStateException("stand-in engine: " + answer);
            }
            return answer;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String head(String command) {
        return command.length() > 40 ? command.substring(0, 40) + "..." : command;
    }

    /** Call only after every mapping of its memory was closed: the engine then frees it. */
    @Override
    public void close() {
        if (process.isAlive()) {
            in.println("EXIT");
            in.flush();
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
