package io.kvreuse.error;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The catalogued problems an operation answers with one status, beyond those any operation may
 * answer. The served OpenAPI document lists them, with their slugs and titles from the catalogue,
 * as that status's error response; all of them must have the same status.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@Repeatable(ProblemResponse.List.class)
public @interface ProblemResponse {

    /** The problems, all of one status. */
    ProblemType[] value();

    /** When they are answered, where the slugs alone do not say it; empty when they do. */
    String note() default "";

    /** The problem responses of one operation. */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface List {
        ProblemResponse[] value();
    }
}
