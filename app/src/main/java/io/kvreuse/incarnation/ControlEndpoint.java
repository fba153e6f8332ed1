package io.kvreuse.incarnation;

import io.kvreuse.protocol.HostNames;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.InetAddress;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An engine's control endpoint, which other engines are told to connect to in hints: exactly
 * {@code tcp://host:port}, the host a DNS name, a dotted IPv4 literal or a bracketed IPv6 literal
 * (not unspecified, multicast or link-local, where cloud metadata services live), the port 1–65535;
 * nothing else (no other scheme, userinfo, path, query, control or bidirectional characters).
 */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.TYPE_USE})
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = ControlEndpoint.Validator.class)
@interface ControlEndpoint {

    String message() default "must be tcp://host:port (a DNS name or IP literal, port 1-65535)";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    /** Bean Validation adapter; null values are left to {@code @NotBlank}. */
    final class Validator implements ConstraintValidator<ControlEndpoint, String> {

        private static final String SCHEME = "tcp://";

        private static final Pattern DOTTED_NUMBERS = Pattern.compile("[0-9.]+");

        private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");

        /** Why {@code endpoint} is not an accepted control endpoint, or null when it is one. */
        static @Nullable String problem(String endpoint) {
            for (int i = 0; i < endpoint.length(); i++) {
                char c = endpoint.charAt(i);
                if (Character.isISOControl(c)
                        || Character.getType(c) == Character.FORMAT
                        || Character.isWhitespace(c)) {
                    return "must not contain control, format (bidirectional) or white-space characters";
                }
            }
            if (!endpoint.startsWith(SCHEME)) {
                return "must start with " + SCHEME + " (the only scheme engines use)";
            }
            String authority = endpoint.substring(SCHEME.length());
            if (authority.indexOf('@') >= 0) {
                return "must not carry userinfo";
            }
            int colon = authority.lastIndexOf(':');
            if (colon < 0) {
                return "must name a port";
            }
            String port = authority.substring(colon + 1);
            if (!PORT.matcher(port).matches() || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                return "port must be 1-65535, with nothing after it";
            }
            return hostProblem(authority.substring(0, colon));
        }

        private static @Nullable String hostProblem(String host) {
            if (host.startsWith("[") && host.endsWith("]")) {
                return addressProblem(host.substring(1, host.length() - 1), true);
            }
            if (DOTTED_NUMBERS.matcher(host).matches()) {
                return addressProblem(host, false);
            }
            if (host.isEmpty() || host.length() > 253) {
                return "host must be a DNS name of 1-253 characters or an IP literal";
            }
            if (!HostNames.isDnsName(host)) {
                return "host must be a DNS name (labels of letters, digits and inner hyphens) or an IP literal";
            }
            return null;
        }

        private static @Nullable String addressProblem(String literal, boolean v6) {
            InetAddress address;
            try {
                address = v6 ? java.net.Inet6Address.ofLiteral(literal) : java.net.Inet4Address.ofLiteral(literal);
            } catch (IllegalArgumentException e) {
                return "host is not a valid IPv" + (v6 ? "6" : "4") + " literal";
            }
            if (literal.indexOf('%') >= 0) {
                return "host must not carry an IPv6 zone";
            }
            if (address.isAnyLocalAddress() || address.isMulticastAddress() || address.isLinkLocalAddress()) {
                return "host must not be an unspecified, multicast or link-local address";
            }
            return null;
        }

        @Override
        public boolean isValid(@Nullable String value, ConstraintValidatorContext context) {
            String problem = value == null ? null : problem(value);
            if (problem == null) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate("must be tcp://host:port: " + problem)
                    .addConstraintViolation();
            return false;
        }
    }
}
