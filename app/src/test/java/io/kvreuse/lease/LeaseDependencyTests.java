package io.kvreuse.lease;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Selection hands its proposals to the lease package, so selection depends on lease and never the
 * reverse; the owners lease writes through (domain's calibration, bank's pins, the audit trail) know
 * nothing of leases or selection either.
 */
class LeaseDependencyTests {

    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(
                    "io.kvreuse.lease",
                    "io.kvreuse.domain",
                    "io.kvreuse.bank",
                    "io.kvreuse.audit",
                    "io.kvreuse.selection");

    @Test
    void leaseNeverDependsOnSelection() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.lease..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.kvreuse.selection..")
                .check(CLASSES);
    }

    @Test
    void theOwnersLeaseWritesThroughDependOnNeitherLeaseNorSelection() {
        noClasses()
                .that()
                .resideInAnyPackage("io.kvreuse.domain..", "io.kvreuse.bank..", "io.kvreuse.audit..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.kvreuse.lease..", "io.kvreuse.selection..")
                .check(CLASSES);
    }
}
