package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The lease package's shape: no two of its classes use each other (a nested type counts as its outer class). */
class LeaseArchitectureTests {

    private static final String LEASE = "io.kvreuse.lease";

    @Test
    void noTwoLeaseClassesUseEachOther() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(LEASE);
        Map<String, Set<String>> uses = new TreeMap<>();
        for (JavaClass c : classes) {
            if (!c.getPackageName().equals(LEASE)) {
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass().getBaseComponentType();
                if (target.getPackageName().equals(LEASE) && !outer(target).equals(outer(c))) {
                    uses.computeIfAbsent(outer(c), k -> new TreeSet<>()).add(outer(target));
                }
            }
        }
        List<String> pairs = new ArrayList<>();
        uses.forEach((a, used) -> used.stream()
                .filter(b ->
                        a.compareTo(b) < 0 && uses.getOrDefault(b, Set.of()).contains(a))
                .forEach(b -> pairs.add(a + " ↔ " + b)));
        assertThat(uses).as("the lease package's classes were imported").containsKey("LeaseDecider");
        assertThat(pairs).as("class pairs that use each other").isEmpty();
    }

    private static String outer(JavaClass c) {
        String name = c.getName().substring(LEASE.length() + 1);
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }
}
