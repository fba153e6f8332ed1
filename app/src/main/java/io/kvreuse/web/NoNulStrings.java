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
 * instead of failing in the database. Nor may they contain a lone surrogate ({@code "\ud800"}): it
 * is no character, and PostgreSQL would store it as {@code ?}, so two different names would become
 * one.
 */
@Configuration(proxyBeanMethods = false)
class NoNulStrings {

    static final String NUL = "NUL characters are not allowed";
    static final String LONE_SURROGATE = "lone UTF-16 surrogates are not allowed";

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
            if (value == null) {
                return null;
            }
            if (value.indexOf('\0') >= 0) {
                return refuse(value, ctxt);
            }
            return hasLoneSurrogate(value)
                    ? (String) ctxt.handleWeirdStringValue(String.class, escaped(value), LONE_SURROGATE)
                    : value;
        }
    }

    static final class KeyDeserializer extends tools.jackson.databind.KeyDeserializer {

        @Override
        public Object deserializeKey(String key, DeserializationContext ctxt) {
            if (key.indexOf('\0') >= 0) {
                return ctxt.handleWeirdKey(String.class, key.replace("\0", "\\u0000"), NUL);
            }
            return hasLoneSurrogate(key) ? ctxt.handleWeirdKey(String.class, escaped(key), LONE_SURROGATE) : key;
        }
    }

    static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /** The value with every surrogate written as an escape, safe to echo in a problem detail. */
    private static String escaped(String value) {
        StringBuilder b = new StringBuilder(value.length());
        value.chars().forEach(c -> {
            if (Character.isSurrogate((char) c)) {
                b.append(String.format("\\u%04x", c));
            } else {
                b.append((char) c);
            }
        });
        return b.toString();
    }

    private static String refuse(String value, DeserializationContext ctxt) {
        return (String) ctxt.handleWeirdStringValue(String.class, value.replace("\0", "\\u0000"), NUL);
    }
}
