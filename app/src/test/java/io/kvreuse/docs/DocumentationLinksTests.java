package io.kvreuse.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README and docs/ are read by people who cloned the repository and have nothing else: every
 * link stays inside the repository and leads to a file that is there (and, with a fragment, to a
 * heading of that file).
 */
class DocumentationLinksTests {

    private final Path root = Markdown.root().toRealPath();

    DocumentationLinksTests() throws Exception {}

    @Test
    void everyLinkOfTheReadmeAndTheDocsStaysInsideTheRepositoryAndResolves() throws Exception {
        List<String> problems = new ArrayList<>();
        int relative = 0;
        for (Path file : Markdown.userDocs(root)) {
            List<String> lines = Files.readAllLines(file);
            for (String target : Markdown.links(lines)) {
                String problem = check(file, target);
                if (problem != null) {
                    problems.add(root.relativize(file) + ": " + target + " — " + problem);
                }
                if (!target.matches("[a-z][a-z0-9+.-]*:.*")) {
                    relative++;
                }
            }
        }
        assertThat(problems).isEmpty();
        // the docs do link each other: a reader who starts at the README reaches every page
        assertThat(relative).isGreaterThan(10);
    }

    @Test
    void theReadmeLinksEveryPageOfTheDocs() throws Exception {
        List<String> links = Markdown.links(Files.readAllLines(root.resolve("README.md")));
        for (Path doc :
                Markdown.userDocs(root).subList(1, Markdown.userDocs(root).size())) {
            assertThat(links)
                    .as("README links %s", root.relativize(doc))
                    .contains(root.relativize(doc).toString());
        }
    }

    @Test
    void linksThatLeaveTheRepositoryAreCaught() throws Exception {
        Path readme = root.resolve("README.md");
        Path guide = root.resolve("docs/api.md");
        assertThat(check(readme, "../shared/DESIGN.md")).contains("outside the repository");
        assertThat(check(guide, "../../shared/API.md")).contains("outside the repository");
        assertThat(check(guide, "../README.md")).isNull();
        assertThat(check(guide, "/work/shared/API.md")).contains("absolute");
        assertThat(check(guide, "file:///work/shared/API.md")).contains("outside the repository");
        assertThat(check(guide, "design.md")).isNull();
        assertThat(check(guide, "no-such-page.md")).contains("no such file");
        assertThat(check(guide, "design.md#no-such-heading")).contains("no heading");
        assertThat(check(guide, "#donor-selection")).isNull();
        // the links of a page are found in prose, not in code
        assertThat(Markdown.links(List.of("see [x](../shared/API.md)", "`[y](../z.md)`", "```", "[w](v.md)", "```")))
                .containsExactly("../shared/API.md");
    }

    /** Why a link from {@code file} is wrong, or null when it is fine. */
    private String check(Path file, String target) throws Exception {
        if (target.startsWith("http://") || target.startsWith("https://") || target.startsWith("mailto:")) {
            return null;
        }
        if (target.matches("[a-z][a-z0-9+.-]*:.*")) {
            return "a " + target.substring(0, target.indexOf(':')) + ": link points outside the repository";
        }
        if (target.startsWith("/")) {
            return "an absolute path is not in a clone of the repository";
        }
        int hash = target.indexOf('#');
        String path = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!resolved.startsWith(root)) {
            return "points outside the repository";
        }
        if (!Files.exists(resolved)) {
            return "no such file in the repository";
        }
        if (fragment != null && resolved.toString().endsWith(".md")) {
            if (!Markdown.anchors(Files.readAllLines(resolved)).contains(fragment)) {
                return "no heading #" + fragment + " in " + root.relativize(resolved);
            }
        }
        return null;
    }
}
