package io.kvreuse.web;

import com.fasterxml.jackson.databind.JavaType;
import io.swagger.v3.core.converter.AnnotatedType;
import io.swagger.v3.core.converter.ModelConverter;
import io.swagger.v3.core.converter.ModelConverterContext;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.oas.models.media.Schema;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * Marks every component of a kvreuse record that is not {@code @Nullable} as required in the
 * served OpenAPI document: an answer always carries it (nulls are never written), and a request
 * without it is refused.
 */
@Component
class RequiredComponents implements ModelConverter {

    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    public @Nullable Schema resolve(AnnotatedType type, ModelConverterContext context, Iterator<ModelConverter> chain) {
        Schema resolved = chain.hasNext() ? chain.next().resolve(type, context, chain) : null;
        if (resolved == null) {
            return null;
        }
        JavaType java = Json.mapper().constructType(type.getType());
        Class<?> raw = java.getRawClass();
        if (!raw.isRecord() || !raw.getPackageName().startsWith("io.kvreuse")) {
            return resolved;
        }
        Schema model = resolved;
        if (resolved.get$ref() != null && context.getDefinedModels() != null) {
            String name = resolved.get$ref().substring(resolved.get$ref().lastIndexOf('/') + 1);
            model = context.getDefinedModels().get(name);
        }
        if (model == null || model.getProperties() == null) {
            return resolved;
        }
        List<String> required = model.getRequired() == null ? new ArrayList<>() : new ArrayList<>(model.getRequired());
        for (RecordComponent c : raw.getRecordComponents()) {
            if (nullable(c) || !model.getProperties().containsKey(c.getName()) || required.contains(c.getName())) {
                continue;
            }
            required.add(c.getName());
        }
        model.setRequired(required);
        return resolved;
    }

    private static boolean nullable(RecordComponent c) {
        return c.isAnnotationPresent(Nullable.class)
                || c.getAnnotatedType().isAnnotationPresent(Nullable.class)
                || (c.getAccessor() != null
                        && c.getAccessor().getAnnotatedReturnType().isAnnotationPresent(Nullable.class));
    }
}
