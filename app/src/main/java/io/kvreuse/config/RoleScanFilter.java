package io.kvreuse.config;

import java.util.List;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.core.type.classreading.MetadataReader;
import org.springframework.core.type.classreading.MetadataReaderFactory;

/**
 * Keeps each role to its own components. The agent role scans an allow-list (the agent package and
 * the clock), so a control-plane feature added later can never reach PostgreSQL from an agent by
 * accident; the control plane leaves the agent package out. Also applies to
 * {@code @ConfigurationPropertiesScan}.
 */
final class RoleScanFilter extends TypeExcludeFilter {

    private static final String ROOT = "io.kvreuse.";
    private static final String AGENT_PACKAGE = "io.kvreuse.agent.";
    private static final List<String> AGENT_ALLOWED = List.of(AGENT_PACKAGE, "io.kvreuse.config.ClockConfiguration");

    private final boolean agent;

    RoleScanFilter(boolean agent) {
        this.agent = agent;
    }

    @Override
    public boolean match(MetadataReader reader, MetadataReaderFactory factory) {
        String name = reader.getClassMetadata().getClassName();
        if (!name.startsWith(ROOT)) {
            return false;
        }
        if (agent) {
            return AGENT_ALLOWED.stream().noneMatch(name::startsWith);
        }
        return name.startsWith(AGENT_PACKAGE);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RoleScanFilter f && f.agent == agent;
    }

    @Override
    public int hashCode() {
        return Boolean.hashCode(agent);
    }
}
