package io.kvreuse.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.error.ProblemType;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/api.md} lists the problem catalogue as it is: one row per entry with its status and
 * title, no row the catalogue lacks, and every problem slug the guide names elsewhere is catalogued.
 */
class ProblemCatalogueDocumentationTests {

    private static final Pattern ROW = Pattern.compile("^\\| `([a-z0-9-]+)` \\| (\\d{3}) \\| ([^|]+) \\|");
    private static final Pattern TYPE_URI = Pattern.compile("https://kvreuse\\.io/problems/([a-z0-9-]+)");

    @Test
    void theGuidesProblemTableIsTheCatalogue() throws Exception {
        List<String> lines = Files.readAllLines(Markdown.root().resolve("docs/api.md"));
        assertThat(rows(lines)).containsExactlyInAnyOrderElementsOf(catalogue());
    }

    @Test
    void theGuideNamesNoProblemTypeOutsideTheCatalogue() throws Exception {
        String guide = Files.readString(Markdown.root().resolve("docs/api.md"));
        Set<String> named = new TreeSet<>();
        Matcher uri = TYPE_URI.matcher(guide);
        while (uri.find()) {
            named.add(uri.group(1));
        }
        String statuses =
                guide.substring(guide.indexOf("| status | meaning | examples |"), guide.indexOf("### Problem types"));
        Matcher example = Pattern.compile("`([a-z]+(?:-[a-z0-9]+)*)`").matcher(statuses);
        while (example.find()) {
            named.add(example.group(1));
        }
        assertThat(named).contains("stale-epoch", "unauthorized", "no-such-lease");
        assertThat(named)
                .allSatisfy(
                        slug -> assertThat(ProblemType.ofSlug(slug)).as(slug).isPresent());
    }

    @Test
    void aRowThatDiffersFromTheCatalogueIsFound() {
        List<String> table = List.of(
                "| `stale-epoch` | 409 | Stale fencing epoch | engine incarnations |",
                "| `no-such-lease` | 404 | Lease not found | leases |",
                "| `made-up` | 400 | Made up | nowhere |");
        assertThat(rows(table)).contains("stale-epoch 409 Stale fencing epoch");
        assertThat(catalogue())
                .contains("stale-epoch 409 Stale fencing epoch")
                .doesNotContain("no-such-lease 404 Lease not found", "made-up 400 Made up");
    }

    private static List<String> rows(List<String> lines) {
        return lines.stream()
                .map(ROW::matcher)
                .filter(Matcher::find)
                .map(m -> m.group(1) + " " + m.group(2) + " " + m.group(3).strip())
                .toList();
    }

    private static List<String> catalogue() {
        return Arrays.stream(ProblemType.values())
                .map(t -> t.slug() + " " + t.status() + " " + t.title())
                .collect(Collectors.toList());
    }
}
