package io.kvreuse.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The repository's user documentation (README.md and everything under docs/) as markdown text. */
final class Markdown {

    private static final Pattern INLINE_LINK = Pattern.compile("\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE_LINK = Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s*<?(\\S+?)>?(?:\\s+.*)?$");
    private static final Pattern HTML_LINK = Pattern.compile("(?:href|src)\\s*=\\s*\"([^\"]+)\"");
    private static final Pattern CODE_SPAN = Pattern.compile("`+[^`]*`+");

    private Markdown() {}

    /** The repository root: the directory above the module the tests run in. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("not inside the kvreuse repository");
        }
        return dir;
    }

    /** README.md and every markdown file under docs/. */
    static List<Path> userDocs(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        return files;
    }

    /** Lines outside fenced code blocks, with inline code spans blanked out. */
    static List<String> prose(List<String> lines) {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String line : lines) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                out.add("");
                continue;
            }
            out.add(fenced ? "" : CODE_SPAN.matcher(line).replaceAll(""));
        }
        return out;
    }

    /** Every link target of a markdown text, in order: inline, reference-style and HTML links. */
    static List<String> links(List<String> lines) {
        List<String> targets = new ArrayList<>();
        for (String line : prose(lines)) {
            for (Pattern p : List.of(INLINE_LINK, HTML_LINK)) {
                Matcher m = p.matcher(line);
                while (m.find()) {
                    targets.add(m.group(1));
                }
            }
            Matcher ref = REFERENCE_LINK.matcher(line);
            if (ref.matches()) {
                targets.add(ref.group(1));
            }
        }
        return targets;
    }

    /** The anchors GitHub gives a markdown file's headings. */
    static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new LinkedHashSet<>();
        boolean fenced = false;
        for (String line : lines) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (!fenced && line.matches("#{1,6} .*")) {
                String text = line.replaceFirst("^#+ ", "").strip();
                String slug = text.toLowerCase(Locale.ROOT)
                        .replaceAll("[`*_\\[\\]()]", "")
                        .replaceAll("[^\\p{L}\\p{N} -]", "")
                        .replace(' ', '-');
                String unique = slug;
                for (int n = 1; anchors.contains(unique); n++) {
                    unique = slug + "-" + n;
                }
                anchors.add(unique);
            }
        }
        return anchors;
    }
}
