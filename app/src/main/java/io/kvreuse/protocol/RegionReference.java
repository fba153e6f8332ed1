package io.kvreuse.protocol;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.jspecify.annotations.Nullable;

/** A region reference in the syntax node agents import ({@link RegionRef}); null is left to {@code @NotBlank}. */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.TYPE_USE})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = RegionReference.Validator.class)
public @interface RegionReference {

    String message() default "must be shm://<name> or cuda-ipc://<gpu>/<handle>?size=<bytes>";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** Bean Validation adapter of {@link RegionRef#problem}. */
    final class Validator implements ConstraintValidator<RegionReference, String> {

        @Override
        public boolean isValid(@Nullable String value, ConstraintValidatorContext context) {
            String problem = value == null ? null : RegionRef.problem(value);
            if (problem == null) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate(
                            problem.replace("{", "(").replace("}", ")"))
                    .addConstraintViolation();
            return false;
        }
    }
}
