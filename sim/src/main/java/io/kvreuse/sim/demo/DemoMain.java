package io.kvreuse.sim.demo;

/**
 * {@code demo/run.sh}: runs the demo (see {@link DemoOptions#USAGE}); exit status 0 when it ran
 * to the end and stopped everything, 1 when a step failed (the logs are kept), 2 for bad options.
 */
public final class DemoMain {

    private DemoMain() {}

    public static void main(String[] args) {
        DemoOptions options;
        try {
            options = DemoOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Demo demo = new Demo(options, System.out);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> demo.stop(false), "kvreuse-demo-stop"));
        int status = 0;
        try {
            demo.run();
        } catch (Exception e) {
            if (!demo.stopped()) {
                System.out.flush();
                System.err.println("the demo failed: " + e);
                e.printStackTrace();
                status = 1;
            }
        }
        demo.stop(status != 0);
        System.exit(status);
    }
}
