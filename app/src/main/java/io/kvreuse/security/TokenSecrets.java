package io.kvreuse.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Token secrets: 256 random bits, stored only as their SHA-256 digest. A fast digest is right here
 * because the secrets are random, not human passwords.
 */
final class TokenSecrets {

    static final String PREFIX = "kvr_";
    private static final SecureRandom random = new SecureRandom();

    private TokenSecrets() {}

    static String generate() {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static byte[] digest(String secret) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }
}
