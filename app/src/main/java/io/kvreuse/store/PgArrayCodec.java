package io.kvreuse.store;

import io.kvreuse.store.ArrayLiteral.PgArray;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.postgresql.client.EncodedParameter;
import io.r2dbc.postgresql.codec.Codec;
import io.r2dbc.postgresql.codec.CodecRegistry;
import io.r2dbc.postgresql.extension.CodecRegistrar;
import io.r2dbc.postgresql.message.Format;
import java.nio.charset.StandardCharsets;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Sends an {@link PgArray} as it is: its text, declared as its array type. Registered with every
 * R2DBC PostgreSQL connection factory of the process through the driver's extension mechanism
 * ({@code META-INF/services/io.r2dbc.postgresql.extension.Extension}), ahead of the driver's own
 * codecs. Encode only: results are never read as {@link PgArray}.
 */
public final class PgArrayCodec implements Codec<PgArray> {

    private final ByteBufAllocator allocator;

    PgArrayCodec(ByteBufAllocator allocator) {
        this.allocator = allocator;
    }

    @Override
    public boolean canDecode(int dataType, Format format, Class<?> type) {
        return false;
    }

    @Override
    public boolean canEncode(Object value) {
        return value instanceof PgArray;
    }

    @Override
    public boolean canEncodeNull(Class<?> type) {
        return false;
    }

    @Override
    public PgArray decode(ByteBuf buffer, int dataType, Format format, Class<? extends PgArray> type) {
        throw new UnsupportedOperationException("an array parameter is never read back as one");
    }

    @Override
    public EncodedParameter encode(Object value) {
        PgArray array = (PgArray) value;
        // the text is mostly ASCII, which String encodes to UTF-8 by one array copy
        return new EncodedParameter(Format.FORMAT_TEXT, array.oid(), Mono.fromSupplier(() -> {
            byte[] utf8 = array.text().getBytes(StandardCharsets.UTF_8);
            return allocator.buffer(utf8.length).writeBytes(utf8);
        }));
    }

    @Override
    public EncodedParameter encode(Object value, int dataType) {
        return encode(value);
    }

    @Override
    public EncodedParameter encodeNull() {
        throw new UnsupportedOperationException("a null array is bound as a typed null, not as an ArrayLiteral");
    }

    /** The driver's extension that adds the codec to each connection's registry. */
    public static final class Registrar implements CodecRegistrar {

        @Override
        public Publisher<Void> register(
                PostgresqlConnection connection, ByteBufAllocator allocator, CodecRegistry registry) {
            registry.addFirst(new PgArrayCodec(allocator));
            return Mono.empty();
        }
    }
}
