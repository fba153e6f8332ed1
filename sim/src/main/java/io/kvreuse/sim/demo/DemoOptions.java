package io.kvreuse.sim.demo;

import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * The demo's command line.
 *
 * @param jar the built {@code kvreuse.jar} to run as control plane and agent
 * @param port the control plane's HTTP port; if taken (or 0), any free port
 * @param home data directory (embedded PostgreSQL, logs); null for a temporary one removed at the end
 * @param keepRunning after the report, keep everything running with background traffic until Ctrl-C
 */
record DemoOptions(Path jar, int port, @Nullable Path home, boolean keepRunning, boolean kvEvents) {

    static final String USAGE = """
            usage: demo/run.sh [--keep-running] [--port N] [--home DIR] [--kv-events]
              --keep-running  after the report, keep the control plane, agent and engines running with
                              background conversations (dashboard usable) until Ctrl-C
              --port N        the control plane's port (default 8080; any free port if taken; 0 = any)
              --home DIR      keep the embedded database and logs in DIR (default: a temporary
                              directory, removed at the end)
              --kv-events     decode engines publish their banks as vLLM KVEvents over ZMQ, which the
                              node agent bridges, instead of calling the events API
              -h, --help      print this and exit
            """;

    static DemoOptions parse(String[] args) {
        Path jar = null;
        int port = 8080;
        Path home = null;
        boolean keepRunning = false;
        boolean kvEvents = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--jar" -> jar = Path.of(value(args, ++i));
                case "--port" -> port = Integer.parseInt(value(args, ++i));
                case "--home" -> home = Path.of(value(args, ++i)).toAbsolutePath();
                case "--keep-running" -> keepRunning = true;
                case "--kv-events" -> kvEvents = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "\n" + USAGE);
            }
        }
        if (jar == null || !Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("--jar must name the built kvreuse.jar (got " + jar + ")\n" + USAGE);
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("--port must be 0..65535\n" + USAGE);
        }
        return new DemoOptions(jar.toAbsolutePath(), port, home, keepRunning, kvEvents);
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value\n" + USAGE);
        }
        return args[i];
    }
}
