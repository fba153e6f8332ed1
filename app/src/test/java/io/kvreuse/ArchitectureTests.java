package io.kvreuse;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The boundaries of STYLE.md ("Boundaries only where real"), checked on the compiled classes. */
class ArchitectureTests {

    /**
     * Packages with a pair of classes that use each other today; each leaves this list when its
     * pairs are untangled, and no package may join it. {@code transfer}: the FFM bindings' agent,
     * regions, block sets and transfers reference each other. ({@code lease} left it once its
     * decider, writer and reads no longer referred back to each other.)
     */
    static final String[] CLASS_PAIRS_NOT_YET_UNTANGLED = {"io.kvreuse.transfer"};

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

    @Test
    void agentSeesOnlyTheWireProtocolAndTheDataPlaneOfKvreuse() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.agent..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.kvreuse..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage(
                                "io.kvreuse.agent..", "io.kvreuse.protocol..", "io.kvreuse.transfer.."))))
                .check(kvreuse);
    }

    /** What the agent may see of kvreuse must not pull the control plane in behind it. */
    @Test
    void wireProtocolSeesNoOtherKvreusePackage() {
        noClasses()
                .that()
                .resideInAPackage("io.kvreuse.protocol..")
                .should()
                .dependOnClassesThat(JavaClass.Predicates.resideInAPackage("io.kvreuse..")
                        .and(DescribedPredicate.not(JavaClass.Predicates.resideInAPackage("io.kvreuse.protocol.."))))
                .check(kvreuse);
    }

    @Test
    void featurePackagesAreFreeOfCycles() {
        slices().matching("io.kvreuse.(*)..").should().beFreeOfCycles().check(kvreuse);
    }

    @Test
    void noTwoClassesOfAPackageUseEachOther() {
        classes()
                .that()
                .resideInAPackage("io.kvreuse..")
                .and()
                .areTopLevelClasses()
                .and()
                .resideOutsideOfPackages(CLASS_PAIRS_NOT_YET_UNTANGLED)
                .should(notUseAClassOfItsPackageThatUsesItBack())
                .check(kvreuse);
    }

    /**
     * A top-level class and the classes nested in it count as one; a pair is reported once, on the
     * class whose name sorts first.
     */
    private static ArchCondition<JavaClass> notUseAClassOfItsPackageThatUsesItBack() {
        Map<String, Set<String>> uses = samePackageUses(kvreuse);
        return new ArchCondition<>("not use a class of its own package that uses it back") {
            @Override
            public void check(JavaClass item, ConditionEvents events) {
                for (String other : uses.getOrDefault(item.getName(), Set.of())) {
                    if (item.getName().compareTo(other) < 0
                            && uses.getOrDefault(other, Set.of()).contains(item.getName())) {
                        events.add(SimpleConditionEvent.violated(
                                item, item.getName() + " and " + other + " use each other"));
                    }
                }
            }
        };
    }

    /** Per top-level class, the other top-level classes of its package that it (or a class nested in it) uses. */
    static Map<String, Set<String>> samePackageUses(JavaClasses classes) {
        Map<String, Set<String>> uses = new HashMap<>();
        for (JavaClass from : classes) {
            for (var dependency : from.getDirectDependenciesFromSelf()) {
                JavaClass to = dependency.getTargetClass().getBaseComponentType();
                if (to.getPackageName().equals(from.getPackageName())
                        && !topLevel(to).equals(topLevel(from))) {
                    uses.computeIfAbsent(topLevel(from), k -> new TreeSet<>()).add(topLevel(to));
                }
            }
        }
        return uses;
    }

    private static String topLevel(JavaClass c) {
        int nested = c.getName().indexOf('$');
        return nested < 0 ? c.getName() : c.getName().substring(0, nested);
    }
}
