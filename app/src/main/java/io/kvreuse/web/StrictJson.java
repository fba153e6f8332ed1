package io.kvreuse.web;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.http.codec.CodecCustomizer;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.Order;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.codec.json.JacksonJsonDecoder;
import org.springframework.util.MimeType;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.LogicalType;

/**
 * Request bodies are read strictly, so a body means one thing only: a duplicate key is refused
 * (last-wins let {@code {"role":"OPERATOR","role":"ROUTER"}} mint a ROUTER); numbers, strings and
 * booleans are never coerced into each other ({@code "5"} and {@code 1.5} are no integer, and a
 * hash the API gives as a string is no JSON number); the bytes must be well-formed UTF-8 (no
 * overlong forms such as {@code C0 AF} for {@code /}, no encoded surrogates, no NUL byte, which is
 * how UTF-16 and UTF-32 bodies start); and a body declared in another charset is a 415.
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

    @Bean
    JsonMapperBuilderCustomizer strictJsonReading() {
        return builder -> builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .withCoercionConfig(
                        LogicalType.Integer,
                        c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
                .withCoercionConfig(
                        LogicalType.Float, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
                .withCoercionConfig(
                        LogicalType.Boolean,
                        c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
                .withCoercionConfig(
                        LogicalType.Textual,
                        c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
    }

    /** Runs after Boot's codec customizer, which installs the default Jackson decoder. */
    @Bean
    @Order(Ordered.LOWEST_PRECEDENCE)
    CodecCustomizer utf8OnlyJsonDecoder(JsonMapper mapper) {
        return configurer -> configurer.defaultCodecs().jacksonJsonDecoder(new Utf8JsonDecoder(mapper));
    }

    /** Jackson's decoder, for UTF-8 only and only after the bytes were checked to be UTF-8. */
    static final class Utf8JsonDecoder extends JacksonJsonDecoder {

        Utf8JsonDecoder(JsonMapper mapper) {
            super(mapper);
        }

        @Override
        public boolean canDecode(ResolvableType type, @Nullable MimeType mimeType) {
            return isUtf8OrUnspecified(mimeType) && super.canDecode(type, mimeType);
        }

        @Override
        public Object decode(
                DataBuffer buffer,
                ResolvableType type,
                @Nullable MimeType mimeType,
                @Nullable Map<String, Object> hints)
                throws DecodingException {
            checkUtf8(buffer);
            return super.decode(buffer, type, mimeType, hints);
        }

        static boolean isUtf8OrUnspecified(@Nullable MimeType mimeType) {
            String charset = mimeType == null ? null : mimeType.getParameter("charset");
            if (charset == null) {
                return true;
            }
            String name = charset.strip();
            if (name.length() > 1 && name.startsWith("\"") && name.endsWith("\"")) {
                name = name.substring(1, name.length() - 1);
            }
            return name.equalsIgnoreCase("UTF-8") || name.equalsIgnoreCase("UTF8");
        }

        private static void checkUtf8(DataBuffer buffer) {
            boolean ascii = true;
            try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
                while (views.hasNext()) {
                    ByteBuffer view = views.next();
                    for (int i = view.position(); i < view.limit(); i++) {
                        byte b = view.get(i);
                        if (b == 0) {
                            throw new NotUtf8Exception(
                                    "the body is not UTF-8 JSON: it holds a NUL byte (UTF-16 or UTF-32?)");
                        }
                        ascii &= b > 0;
                    }
                }
            }
            if (ascii) {
                // seven-bit bytes are always well-formed UTF-8: the usual API body needs neither a copy nor a decoder
                return;
            }
            ByteBuffer bytes = ByteBuffer.allocate(buffer.readableByteCount());
            buffer.toByteBuffer(buffer.readPosition(), bytes, 0, bytes.capacity());
            try {
                StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(bytes);
            } catch (CharacterCodingException e) {
                throw new NotUtf8Exception(
                        "the body is not well-formed UTF-8 (an overlong, truncated or surrogate sequence)");
            }
        }
    }

    /** A body that is not UTF-8: its message is what the client is told. */
    static final class NotUtf8Exception extends DecodingException {

        NotUtf8Exception(String message) {
            super(message);
        }
    }
}
