package io.kvreuse.web;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.deser.jdk.StringDeserializer;
import tools.jackson.databind.module.SimpleModule;

/**
 * Request strings may not contain NUL ({@code \u0000}): PostgreSQL cannot store it in {@code text}
 * or {@code jsonb}, so such a value is refused when the body is read (a 400 naming the field)
 * instead of failing in the database.
 */
@Configuration(proxyBeanMethods = false)
class NoNulStrings {

    static final String NUL = "NUL characters are not allowed";

    @Bean
    JsonMapperBuilderCustomizer nulRefusingStringDeserializers() {
        SimpleModule module = new SimpleModule("kvreuse-no-nul-strings");
        module.addDeserializer(String.class, new Deserializer());
        module.addKeyDeserializer(String.class, new KeyDeserializer());
        return builder -> builder.addModule(module);
    }

    static final class Deserializer extends StringDeserializer {

        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) {
            String value = super.deserialize(p, ctxt);
            return value != null && value.indexOf('\0') >= 0 ? refuse(value, ctxt) : value;
        }
    }

    static final class KeyDeserializer extends tools.jackson.databind.KeyDeserializer {

        @Override
        public Object deserializeKey(String key, DeserializationContext ctxt) {
            return key.indexOf('\0') >= 0 ? ctxt.handleWeirdKey(String.class, key.replace("\0", "\\u0000"), NUL) : key;
        }
    }

    private static String refuse(String value, DeserializationContext ctxt) {
        return (String) ctxt.handleWeirdStringValue(String.class, value.replace("\0", "\\u0000"), NUL);
    }
}
