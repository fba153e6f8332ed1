package io.kvreuse.security;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.UUID;

/**
 * Where a page of the token list ends: the creation time (to the microsecond PostgreSQL keeps)
 * and id of its last token. Clients pass it back as an opaque string.
 */
public record TokenCursor(OffsetDateTime createdAt, UUID tokenId) {

    /** The cursor after the token created at {@code createdAt} with id {@code tokenId}. */
    static TokenCursor after(Instant createdAt, UUID tokenId) {
        return new TokenCursor(createdAt.atOffset(ZoneOffset.UTC), tokenId);
    }

    String encode() {
        long micros = ChronoUnit.MICROS.between(Instant.EPOCH, createdAt.toInstant());
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((micros + "." + tokenId).getBytes(StandardCharsets.US_ASCII));
    }

    /** The cursor a previous page handed out; anything else is a 400 {@code invalid-parameter}. */
    static TokenCursor decode(String text) {
        try {
            String plain = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.US_ASCII);
            int dot = plain.indexOf('.');
            long micros = Long.parseLong(plain.substring(0, dot));
            UUID id = UUID.fromString(plain.substring(dot + 1));
            if (!id.toString().equals(plain.substring(dot + 1))) {
                throw new IllegalArgumentException("not a canonical uuid");
            }
            return new TokenCursor(Instant.EPOCH.plus(micros, ChronoUnit.MICROS).atOffset(ZoneOffset.UTC), id);
        } catch (RuntimeException e) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "cursor must be one a previous page of tokens returned");
        }
    }
}
