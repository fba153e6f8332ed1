package io.kvreuse.system;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Signals to processes of the system under test, through {@code kill}. */
final class Signals {

    private Signals() {}

    /** Sends {@code signal} ({@code STOP}, {@code CONT}, …) to every process of {@code pids}. */
    static void send(String signal, List<Long> pids) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(pid -> cmd.add(Long.toString(pid)));
        Process kill = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException(
                    cmd + ": " + new String(kill.getInputStream().readAllBytes()));
        }
    }
}
