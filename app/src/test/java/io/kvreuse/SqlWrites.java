package io.kvreuse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the SQL writes of source code: every {@code INSERT INTO}, {@code UPDATE … SET}, {@code
 * DELETE FROM}, {@code MERGE INTO} and {@code TRUNCATE} (an {@code INSERT … ON CONFLICT DO UPDATE}
 * is its insert) inside Java string literals and text blocks, or inside a database function's body.
 * Comments are not code and are skipped. A literal that ends where a table name should follow (the
 * name would come from a variable) is an unresolved write: the owner of such a write cannot be
 * checked, so it is reported as one.
 */
final class SqlWrites {

    /** One write: where it is, in which package, and the table it changes (lower case). */
    record Write(String where, String pkg, String table) {}

    /** A write whose table is not spelt out in the literal. */
    record Unresolved(String where, String pkg, String text) {}

    /** What a scan found. */
    record Found(List<Write> writes, List<Unresolved> unresolved) {}

    private static final String NAME = "\"?([A-Za-z_][A-Za-z0-9_$]*)\"?";
    private static final String QUALIFIED = "(?:\"?[A-Za-z_][A-Za-z0-9_$]*\"?\\.)?" + NAME;
    private static final int FLAGS = Pattern.CASE_INSENSITIVE;

    private static final List<Pattern> WRITES = List.of(
            Pattern.compile("\\bINSERT\\s+INTO\\s+(?:ONLY\\s+)?" + QUALIFIED, FLAGS),
            Pattern.compile(
                    "\\bUPDATE\\s+(?:ONLY\\s+)?(?!SET\\b)" + QUALIFIED
                            + "(?:\\s+(?:AS\\s+)?(?!SET\\b)[A-Za-z_][A-Za-z0-9_]*)?\\s+SET\\b",
                    FLAGS),
            Pattern.compile("\\bDELETE\\s+FROM\\s+(?:ONLY\\s+)?" + QUALIFIED, FLAGS),
            Pattern.compile("\\bMERGE\\s+INTO\\s+(?:ONLY\\s+)?" + QUALIFIED, FLAGS),
            Pattern.compile("\\bTRUNCATE\\s+(?:TABLE\\s+)?(?:ONLY\\s+)?" + QUALIFIED, FLAGS));

    /** A write keyword at the end of a literal: its table is concatenated in. */
    private static final Pattern TRAILING = Pattern.compile(
            "(?:\\bINSERT\\s+INTO|\\bDELETE\\s+FROM|\\bMERGE\\s+INTO|\\bTRUNCATE(?:\\s+TABLE)?"
                    + "|(?<!\\bFOR\\s)(?<!\\bDO\\s)\\bUPDATE(?:\\s+" + QUALIFIED + "(?:\\s+[A-Za-z_]\\w*)?)?)\\s*$",
            FLAGS);

    private SqlWrites() {}

    /** Every write in the Java files under {@code root}. */
    static Found inJavaSources(Path root) {
        List<Write> writes = new ArrayList<>();
        List<Unresolved> unresolved = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file :
                    files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Found f = inJava(root.relativize(file).toString(), Files.readString(file));
                writes.addAll(f.writes());
                unresolved.addAll(f.unresolved());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Found(writes, unresolved);
    }

    /** Every write in the string literals of one Java source. */
    static Found inJava(String fileName, String source) {
        String pkg = packageOf(source);
        List<Write> writes = new ArrayList<>();
        List<Unresolved> unresolved = new ArrayList<>();
        for (Literal l : literals(source)) {
            String where = fileName + ":" + l.line();
            scan(where, pkg, l.text(), writes, unresolved);
        }
        return new Found(writes, unresolved);
    }

    /** Every write in a database function's body; {@code pkg} names where it lives. */
    static Found inFunction(String where, String pkg, String body) {
        List<Write> writes = new ArrayList<>();
        List<Unresolved> unresolved = new ArrayList<>();
        scan(where, pkg, body, writes, unresolved);
        return new Found(writes, unresolved);
    }

    private static void scan(String where, String pkg, String text, List<Write> writes, List<Unresolved> unresolved) {
        for (Pattern p : WRITES) {
            Matcher m = p.matcher(text);
            while (m.find()) {
                writes.add(new Write(where, pkg, m.group(1).toLowerCase(Locale.ROOT)));
            }
        }
        Matcher trailing = TRAILING.matcher(text);
        if (trailing.find()) {
            unresolved.add(new Unresolved(where, pkg, trailing.group().strip()));
        }
    }

    private static String packageOf(String source) {
        Matcher m = Pattern.compile("(?m)^\\s*package\\s+([\\w.]+)\\s*;").matcher(source);
        return m.find() ? m.group(1) : "";
    }

    /** A string literal or text block's content and the line it starts on. */
    record Literal(int line, String text) {}

    /** The string literals and text blocks of a Java source, comments and char literals skipped. */
    static List<Literal> literals(String s) {
        List<Literal> out = new ArrayList<>();
        int line = 1;
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\n') {
                line++;
                i++;
            } else if (s.startsWith("//", i)) {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (s.startsWith("/*", i)) {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                line += count(s, i, end);
                i = end;
            } else if (s.startsWith("\"\"\"", i)) {
                int start = i + 3;
                int end = start;
                while (end < n && !(s.startsWith("\"\"\"", end) && s.charAt(end - 1) != '\\')) {
                    end++;
                }
                out.add(new Literal(line, s.substring(start, Math.min(end, n))));
                line += count(s, i, Math.min(end + 3, n));
                i = Math.min(end + 3, n);
            } else if (c == '"' || c == '\'') {
                StringBuilder b = new StringBuilder();
                int j = i + 1;
                while (j < n && s.charAt(j) != c && s.charAt(j) != '\n') {
                    if (s.charAt(j) == '\\' && j + 1 < n) {
                        b.append(s.charAt(j + 1) == 'n' ? '\n' : s.charAt(j + 1));
                        j += 2;
                    } else {
                        b.append(s.charAt(j++));
                    }
                }
                if (c == '"') {
                    out.add(new Literal(line, b.toString()));
                }
                i = j + 1;
            } else {
                i++;
            }
        }
        return out;
    }

    private static int count(String s, int from, int to) {
        int lines = 0;
        for (int k = from; k < to; k++) {
            if (s.charAt(k) == '\n') {
                lines++;
            }
        }
        return lines;
    }
}
