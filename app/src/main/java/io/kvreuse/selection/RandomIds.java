package io.kvreuse.selection;

import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.UUID;

/**
 * Random (version 4) UUIDs for lease and hint message ids, from one DRBG per thread. {@link
 * UUID#randomUUID()} draws from one process-wide generator behind a lock; event-loop threads that
 * met there on every selection waited for each other, for 10 ms and more whenever the holder lost
 * its core.
 */
final class RandomIds {

    private static final ThreadLocal<SecureRandom> RANDOM = ThreadLocal.withInitial(RandomIds::drbg);

    private RandomIds() {}

    static UUID next() {
        byte[] b = new byte[16];
        RANDOM.get().nextBytes(b);
        b[6] = (byte) ((b[6] & 0x0f) | 0x40); // version 4
        b[8] = (byte) ((b[8] & 0x3f) | 0x80); // IETF variant
        ByteBuffer bytes = ByteBuffer.wrap(b);
        return new UUID(bytes.getLong(), bytes.getLong());
    }

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK offers no DRBG SecureRandom", e);
        }
    }
}
