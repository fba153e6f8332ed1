package io.kvreuse.lease;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The lease package's size (issue 14): no method or constructor in it is over {@value #MAX_METHOD}
 * lines, counted from its signature (annotations and javadoc left out) to its closing brace. The
 * package's total line count is reported; the target for it is {@value #TARGET_TOTAL}.
 */
class LeaseSizeTests {

    static final int MAX_METHOD = 40;

    static final int TARGET_TOTAL = 2_500;

    static final Path LEASE = Path.of("src/main/java/io/kvreuse/lease");

    @Test
    void noLeaseMethodIsOverFortyLines() throws IOException {
        List<Path> files = sources();
        Map<String, Long> lines = new TreeMap<>();
        for (Path f : files) {
            try (Stream<String> l = Files.lines(f)) {
                lines.put(f.getFileName().toString(), l.count());
            }
        }
        long total = lines.values().stream().mapToLong(Long::longValue).sum();
        System.out.println("lease package: " + files.size() + " files, " + total + " lines (target " + TARGET_TOTAL
                + "): " + lines);
        List<String> longest = methodsOver(0, files);
        System.out.println("longest lease methods: " + longest.subList(0, Math.min(5, longest.size())));
        List<String> tooLong = methodsOver(MAX_METHOD, files);
        assertThat(files).as("the lease package's sources were found").hasSizeGreaterThan(10);
        assertThat(tooLong).as("lease methods over " + MAX_METHOD + " lines").isEmpty();
    }

    private static List<Path> sources() throws IOException {
        try (Stream<Path> s = Files.list(LEASE)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }

    /**
     * Each method or constructor longer than {@code max} lines, longest first, as {@code File.java:line
     * name (n lines)}.
     */
    static List<String> methodsOver(int max, List<Path> files) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Map<String, Long> found = new HashMap<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
            JavacTask task = (JavacTask)
                    javac.getTask(null, fm, null, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
            SourcePositions positions = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                String text = unit.getSourceFile().getCharContent(true).toString();
                LineMap map = unit.getLineMap();
                new TreePathScanner<Void, Void>() {
                    @Override
                    public Void visitMethod(MethodTree m, Void unused) {
                        long end = positions.getEndPosition(unit, m);
                        long afterModifiers = positions.getEndPosition(unit, m.getModifiers());
                        long start = afterModifiers < 0 ? positions.getStartPosition(unit, m) : afterModifiers;
                        while (start < text.length() && Character.isWhitespace(text.charAt((int) start))) {
                            start++;
                        }
                        long first = map.getLineNumber(start);
                        long n = map.getLineNumber(end) - first + 1;
                        if (n > max) {
                            String file = Path.of(unit.getSourceFile().toUri())
                                    .getFileName()
                                    .toString();
                            found.put(file + ":" + first + " " + m.getName() + " (" + n + " lines)", n);
                        }
                        return super.visitMethod(m, unused);
                    }
                }.scan(unit, null);
            }
        }
        return found.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey)
                .toList();
    }
}
