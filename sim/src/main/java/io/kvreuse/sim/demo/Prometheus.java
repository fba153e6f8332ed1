package io.kvreuse.sim.demo;

/** Reads one meter out of a Prometheus text scrape. */
final class Prometheus {

    private Prometheus() {}

    /** The sum over every series of {@code name}, or -1 when the scrape has none. */
    static double value(String scrape, String name) {
        double sum = 0;
        boolean found = false;
        for (String line : scrape.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                found = true;
            }
        }
        return found ? sum : -1;
    }
}
