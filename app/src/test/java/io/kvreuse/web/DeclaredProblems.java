package io.kvreuse.web;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvreuse.error.ProblemType;
import io.kvreuse.support.ExchangeRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks real answers against the served OpenAPI document: every problem an operation answered
 * must be listed (as {@code slug (title)}) under that status of that operation's responses, either
 * as one of its own declarations or as one any operation may answer.
 */
final class DeclaredProblems {

    /**
     * The lease operations that declare no problems of their own yet, while their controllers are
     * rewritten. Their answers are collected but not held against them. Empty this once they
     * declare theirs.
     */
    static final Set<String> AWAITING_LEASE_DECLARATIONS = Set.of();

    /** What the recorded answers showed: problems not declared, those of operations awaiting theirs, all seen. */
    record Verdict(List<String> undeclared, Set<String> awaiting, Set<String> answered) {}

    private DeclaredProblems() {}

    /** Every problem answer among {@code recorded}, checked against {@code doc}. */
    static Verdict check(ServedOpenApi doc, List<ExchangeRecorder.Exchange> recorded) throws Exception {
        List<String> undeclared = new ArrayList<>();
        Set<String> awaiting = new TreeSet<>();
        Set<String> answered = new TreeSet<>();
        for (ExchangeRecorder.Exchange e : recorded) {
            if (e.status() < 400) {
                continue;
            }
            Optional<ServedOpenApi.Operation> op = doc.operation(e.method(), e.path());
            if (op.isEmpty()) {
                continue; // no operation of the document: the conformance test reports those
            }
            String slug = slug(e.responseBody());
            String answer = op.get().id() + " " + e.status() + " " + slug;
            answered.add(answer);
            String problem = why(op.get(), e.status(), slug);
            if (problem == null) {
                continue;
            }
            if (AWAITING_LEASE_DECLARATIONS.contains(op.get().id())) {
                awaiting.add(answer);
            } else {
                undeclared.add(answer + " (" + e.method() + " " + e.path() + "): " + problem);
            }
        }
        return new Verdict(undeclared, awaiting, answered);
    }

    /** Why the answer is not declared for the operation; null when it is. */
    static String why(ServedOpenApi.Operation op, int status, String slug) {
        if (ProblemType.ofSlug(slug).isEmpty()) {
            return "'" + slug + "' is not a catalogued problem type";
        }
        if (ProblemType.ofSlug(slug).get().status() != status) {
            return "answered with status " + status + ", the catalogue says "
                    + ProblemType.ofSlug(slug).get().status();
        }
        JsonNode response = op.node().path("responses").path(String.valueOf(status));
        if (response.isMissingNode()) {
            return "status " + status + " is not declared";
        }
        return lists(response.path("description").asText(), slug) ? null : "not listed under " + status;
    }

    /** Whether a response description lists {@code slug} as {@code slug (title)}, not inside a longer slug. */
    static boolean lists(String description, String slug) {
        return Pattern.compile("(?<![a-z0-9-])" + Pattern.quote(slug) + " \\(")
                .matcher(description)
                .find();
    }

    /** The slug of a problem document's {@code type}; what the body holds instead when it is none. */
    static String slug(String body) throws Exception {
        if (body.isBlank()) {
            return "(no body)";
        }
        String type = ServedOpenApi.JSON.readTree(body).path("type").asText("");
        return type.startsWith(ProblemType.TYPE_BASE) ? type.substring(ProblemType.TYPE_BASE.length()) : type;
    }
}
