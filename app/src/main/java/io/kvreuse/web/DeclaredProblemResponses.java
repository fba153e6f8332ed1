package io.kvreuse.web;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springframework.stereotype.Component;
import org.springframework.web.method.HandlerMethod;

/**
 * Writes each operation's {@link ProblemResponse}s into its error responses: one response per
 * status, its description generated from the catalogue (slug and title of every problem), so the
 * documented problem types are the answered ones by construction.
 */
@Component
class DeclaredProblemResponses implements OperationCustomizer {

    @Override
    public Operation customize(Operation operation, HandlerMethod handler) {
        ProblemResponse[] declared = handler.getMethod().getAnnotationsByType(ProblemResponse.class);
        if (declared.length == 0) {
            return operation;
        }
        ApiResponses responses = operation.getResponses() == null ? new ApiResponses() : operation.getResponses();
        for (ProblemResponse p : declared) {
            String code = String.valueOf(status(p, handler));
            ApiResponse response = responses.containsKey(code) ? responses.get(code) : new ApiResponse();
            responses.addApiResponse(code, response.description(describe(List.of(p.value()), p.note())));
        }
        operation.setResponses(responses);
        return operation;
    }

    /** The one status of a declaration; a declaration that mixes statuses is a programming error. */
    private static int status(ProblemResponse p, HandlerMethod handler) {
        List<Integer> statuses =
                Arrays.stream(p.value()).map(ProblemType::status).distinct().toList();
        if (statuses.size() != 1) {
            throw new IllegalStateException(
                    handler.getShortLogMessage() + ": a @ProblemResponse names problems of statuses " + statuses);
        }
        return statuses.getFirst();
    }

    /** {@code slug} (title) for each problem, then the note. */
    static String describe(List<ProblemType> types, String note) {
        String listed =
                types.stream().map(t -> t.slug() + " (" + t.title() + ")").collect(Collectors.joining(", "));
        return note.isBlank() ? listed : listed + ": " + note;
    }
}
