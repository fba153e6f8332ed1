package io.kvreuse.index;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

class IndexArchitectureTests {

    /** The benchmarks compile this package on its own, and it must stay free of Spring and the database. */
    @Test
    void indexDependsOnlyOnTheJdkAndJSpecify() {
        classes()
                .that()
                .resideInAPackage("io.kvreuse.index")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("io.kvreuse.index", "java..", "org.jspecify..")
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.kvreuse.index"));
    }
}
