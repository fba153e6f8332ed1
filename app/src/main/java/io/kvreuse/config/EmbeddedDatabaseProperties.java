package io.kvreuse.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.env.Environment;

/**
 * The development-mode PostgreSQL ({@code kvreuse.embedded-database.*}). Bound by hand from the
 * environment: the database starts before the application context exists.
 *
 * @param durable whether a commit reaches the disk before it is acknowledged ({@code fsync} and
 *     {@code synchronous_commit} on, PostgreSQL's own defaults). Only test suites turn it off, for
 *     speed: a host crash would then lose writes kvreuse already answered as durable
 */
@ConfigurationProperties("kvreuse.embedded-database")
record EmbeddedDatabaseProperties(@DefaultValue("true") boolean durable) {

    static final String PREFIX = "kvreuse.embedded-database";

    static EmbeddedDatabaseProperties from(Environment env) {
        return Binder.get(env).bindOrCreate(PREFIX, EmbeddedDatabaseProperties.class);
    }

    /** The PostgreSQL settings that make (or, for tests, unmake) a commit durable. */
    String onOff() {
        return durable ? "on" : "off";
    }
}
