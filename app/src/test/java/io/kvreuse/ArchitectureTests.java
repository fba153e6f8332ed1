package io.kvreuse;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The boundaries of STYLE.md ("Boundaries only where real"), checked on the compiled classes. */
class ArchitectureTests {

    private static JavaClasses kvreuse;

    @BeforeAll
    static void importClasses() {
        kvreuse = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.kvreuse");
    }

    @Test
    void transferFfmNeverSeesSpring() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.transfer..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.springframework..")
                .allowEmptyShould(true)
                .check(kvreuse);
    }

    @Test
    void appNeverSeesTheForeignFunctionApi() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse..")
                .and()
                .resideOutsideOfPackage("io.kvreuse.transfer..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("java.lang.foreign..")
                .check(kvreuse);
    }

    @Test
    void agentRoleNeverTouchesPostgres() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.agent..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.springframework.r2dbc..",
                        "io.r2dbc..",
                        "org.postgresql..",
                        "org.flywaydb..",
                        "io.kvreuse.store..")
                .allowEmptyShould(true)
                .check(kvreuse);
    }

    @Test
    void kvEventBridgeSeesOnlyTheWireProtocolOfKvreuse() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.agent.kvevents..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.kvreuse..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage(
                                "io.kvreuse.agent.kvevents..", "io.kvreuse.protocol..", "io.kvreuse.transfer.."))))
                .check(kvreuse);
    }

    @Test
    void packagesAreByFeatureNotByLayer() {
        noClasses()
                .should()
                .resideInAnyPackage(
                        "io.kvreuse.controller..",
                        "io.kvreuse.service..",
                        "io.kvreuse.repository..",
                        "io.kvreuse.model..")
                .allowEmptyShould(true)
                .check(kvreuse);
    }

    @Test
    void featuresDoNotReachIntoTheWebLayerExceptForProblems() {
        noClasses()
                .that()
                .resideOutsideOfPackages("io.kvreuse.web..", "io.kvreuse.security..", "io.kvreuse.admin..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.kvreuse.web..")
                .check(kvreuse);
    }
}
