package io.kvreuse.error;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.kvreuse.protocol.WireProblem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The catalogue is the one spelling of every problem: its slugs are unique and well formed, main
 * code names problems only through it (no slug or type URI as a string literal elsewhere), and
 * every entry is answered somewhere.
 */
class ProblemCatalogueTests {

    private static final Pattern SLUG = Pattern.compile("[a-z][a-z0-9]*(-[a-z0-9]+)*");
    /** A text block, a string literal, a char literal or a comment, in source order; group 1 or 2 is a string's text. */
    private static final Pattern TOKEN = Pattern.compile(
            "\"\"\"(.*?)\"\"\"|\"((?:[^\"\\\\\\n]|\\\\.)*)\"|'(?:[^'\\\\]|\\\\.)+'|/\\*.*?\\*/|//[^\\n]*",
            Pattern.DOTALL);

    private static final Pattern HYPHENATED = Pattern.compile("(?<![a-z0-9-])[a-z0-9]+(?:-[a-z0-9]+)+(?![a-z0-9-])");
    /** The catalogue itself, and the wire contract that spells the agent's slugs for both sides. */
    private static final Set<String> SPELLED_HERE = Set.of("ProblemType.java", "WireProblem.java");

    private static JavaClasses kvreuse;

    @BeforeAll
    static void importClasses() {
        kvreuse = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.kvreuse");
    }

    @Test
    void everyEntryHasAUniqueWellFormedSlugATitleAndAnErrorStatus() {
        List<String> slugs =
                Arrays.stream(ProblemType.values()).map(ProblemType::slug).toList();
        assertThat(slugs).doesNotHaveDuplicates().allMatch(s -> SLUG.matcher(s).matches());
        assertThat(ProblemType.values()).allSatisfy(t -> {
            assertThat(t.status()).isBetween(400, 599);
            assertThat(t.title()).isNotBlank().doesNotContain("Exception");
            assertThat(t.uri()).isEqualTo("https://kvreuse.io/problems/" + t.slug());
            assertThat(ProblemType.ofSlug(t.slug())).contains(t);
        });
        assertThat(ProblemType.ofSlug("no-such-problem")).isEmpty();
        assertThat(ProblemType.values()).hasSizeGreaterThan(90);
    }

    @Test
    void theAgentsSlugsAreTheCataloguesOwn() {
        for (WireProblem w : WireProblem.values()) {
            assertThat(ProblemType.ofSlug(w.slug())).as(w.name()).isPresent();
        }
        assertThat(ProblemType.TYPE_BASE).isEqualTo(WireProblem.TYPE_BASE);
        assertThat(WireProblem.slugOf(ProblemType.STALE_EPOCH.uri())).isEqualTo("stale-epoch");
        assertThat(WireProblem.slugOf("https://example.com/problems/stale-epoch"))
                .isEmpty();
        assertThat(WireProblem.slugOf(null)).isEmpty();
    }

    @Test
    void aBareStatusGetsTheAnyOperationEntryOfThatStatus() {
        assertThat(ProblemType.forStatus(404)).isEqualTo(ProblemType.NOT_FOUND);
        assertThat(ProblemType.forStatus(413)).isEqualTo(ProblemType.PAYLOAD_TOO_LARGE);
        assertThat(ProblemType.forStatus(405)).isEqualTo(ProblemType.METHOD_NOT_ALLOWED);
        assertThat(ProblemType.forStatus(400)).isEqualTo(ProblemType.INVALID_REQUEST);
        assertThat(ProblemType.forStatus(418)).isEqualTo(ProblemType.INVALID_REQUEST);
        assertThat(ProblemType.forStatus(502)).isEqualTo(ProblemType.INTERNAL_ERROR);
        assertThat(ProblemType.values())
                .filteredOn(t -> t.status() == 404 && t != ProblemType.NOT_FOUND)
                .isNotEmpty()
                .noneMatch(ProblemType::anyOperation);
    }

    @Test
    void noMainSourceSpellsAProblemOutsideTheCatalogue() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> roots = Files.list(root())) {
            for (Path module : roots.toList()) {
                Path main = module.resolve("src/main/java");
                if (!Files.isDirectory(main)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(main)) {
                    files.filter(p -> p.toString().endsWith(".java"))
                            .filter(p -> !SPELLED_HERE.contains(p.getFileName().toString()))
                            .forEach(p -> spelled(read(p)).forEach(s -> found.add(root().relativize(p) + ": " + s)));
                }
            }
        }
        assertThat(found).isEmpty();
    }

    @Test
    void theScanFindsSlugsAndTypeUrisInLiteralsButNotInComments() {
        assertThat(spelled("x = new Thing(\"stale-epoch\", d); // \"no-such-lease\"\n"))
                .containsExactly("stale-epoch");
        assertThat(spelled("@A(description = \"lease-fenced, part-final: when\")"))
                .containsExactly("lease-fenced", "part-final");
        assertThat(spelled("p = \"https://kvreuse.io/problems/\" + slug;"))
                .containsExactly("https://kvreuse.io/problems/");
        assertThat(spelled("/* \"stale-epoch\" */ s = \"a stale fencing epoch\"; m = \"max-connections\";"))
                .isEmpty();
        assertThat(spelled("c = '\"'; u = \"https://x\"; t = \"\"\"\n  no-such-order\n  \"\"\";"))
                .containsExactly("no-such-order");
        assertThat(spelled("s = \"not-a-stale-epoch-here\";")).isEmpty();
    }

    @Test
    void everyEntryIsNamedByMainCodeOutsideTheCatalogue() {
        JavaClass catalogue = kvreuse.get(ProblemType.class);
        Set<String> named = new HashSet<>();
        for (JavaFieldAccess access : catalogue.getAccessesToSelf().stream()
                .filter(a -> a instanceof JavaFieldAccess)
                .map(a -> (JavaFieldAccess) a)
                .toList()) {
            if (!access.getOriginOwner().isEquivalentTo(ProblemType.class)) {
                named.add(access.getTarget().getName());
            }
        }
        // an enum constant in an annotation value is no field read: read the operations' declarations
        kvreuse.stream()
                .flatMap(c -> c.getMethods().stream())
                .filter(m -> m.isAnnotatedWith(ProblemResponse.class) || m.isAnnotatedWith(ProblemResponse.List.class))
                .flatMap(m -> Arrays.stream(m.reflect().getAnnotationsByType(ProblemResponse.class)))
                .flatMap(p -> Arrays.stream(p.value()))
                .forEach(t -> named.add(t.name()));
        Set<String> unused = Arrays.stream(ProblemType.values())
                .map(ProblemType::name)
                .filter(n -> !named.contains(n))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(named).contains("STALE_EPOCH", "NO_SUCH_LEASE", "STORE_UNAVAILABLE");
        assertThat(unused).as("catalogue entries no main code names").isEmpty();
    }

    /** The problem slugs and type URIs that string literals of this source spell, comments left out. */
    static List<String> spelled(String source) {
        Set<String> slugs =
                Arrays.stream(ProblemType.values()).map(ProblemType::slug).collect(Collectors.toSet());
        List<String> found = new ArrayList<>();
        Matcher token = TOKEN.matcher(source);
        while (token.find()) {
            String text = token.group(1) != null ? token.group(1) : token.group(2);
            if (text == null) {
                continue; // a comment or a char literal
            }
            if (text.contains(ProblemType.TYPE_BASE)) {
                found.add(text);
                continue;
            }
            // one-word slugs (forbidden, conflict) are ordinary words; no constructor takes a slug anyway
            Matcher word = HYPHENATED.matcher(text);
            while (word.find()) {
                if (slugs.contains(word.group())) {
                    found.add(word.group());
                }
            }
        }
        return found;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("not inside the kvreuse repository");
        }
        return dir;
    }
}
