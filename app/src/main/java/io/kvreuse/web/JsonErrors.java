package io.kvreuse.web;

import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;

/** Describes a JSON decoding failure for a client without leaking class names or locations. */
final class JsonErrors {

    private JsonErrors() {}

    static String describe(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof StrictJson.NotUtf8Exception n) {
                return n.getMessage();
            }
            if (t instanceof InvalidFormatException f && f.getOriginalMessage().endsWith(NoNulStrings.NUL)) {
                return "field '" + path(f) + "' contains a NUL character, which is not allowed";
            }
            if (t instanceof InvalidFormatException f && f.getOriginalMessage().endsWith(NoNulStrings.LONE_SURROGATE)) {
                return "field '" + path(f) + "' contains a lone UTF-16 surrogate, which is no character";
            }
            if (t instanceof InvalidFormatException f) {
                return "field '" + path(f) + "' has an invalid value '" + f.getValue() + "'";
            }
            if (t instanceof MismatchedInputException m) {
                return "field '" + path(m) + "' has the wrong type or shape";
            }
            if (t instanceof JacksonException j) {
                return "the body is not valid JSON: " + clean(j.getOriginalMessage());
            }
        }
        return "the request body could not be read as JSON";
    }

    static String path(DatabindException e) {
        String path = e.getPath().stream()
                .map(ref -> ref.getPropertyName() != null ? ref.getPropertyName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
        return path.isEmpty() ? "(root)" : path;
    }

    private static String clean(String message) {
        return message.replaceAll("\\s*\\(start marker.*$", "")
                .replaceAll("\\s*at \\[Source.*$", "")
                .replaceAll("\\s*\\[Source.*$", "");
    }
}
