package io.kvreuse.system;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After each scenario of the shared fleet: a scenario that failed before its own check that its
 * leases ended is checked here, so a lease it left stuck is reported with it (JUnit adds this failure
 * to the scenario's own) and not as the failure of the next scenario that looks at the fleet.
 */
final class LeasesLeftCheck implements AfterEachCallback {

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        SystemFleet fleet = SystemFleet.sharedIfStarted();
        if (fleet != null) {
            fleet.assertScenarioLeftNothing();
        }
    }
}
