package io.kvreuse.transfer;

import org.jspecify.annotations.Nullable;

/** Runs every teardown step even when one fails, then rethrows the first failure. */
final class Teardown {

    private @Nullable RuntimeException first;

    void step(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            if (first == null) {
                first = e;
            } else {
                first.addSuppressed(e);
            }
        }
    }

    void rethrow() {
        if (first != null) {
            throw first;
        }
    }
}
