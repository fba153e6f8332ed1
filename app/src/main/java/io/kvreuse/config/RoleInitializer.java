package io.kvreuse.config;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Registers the {@link RoleScanFilter} before component scanning, where Boot's {@code
 * TypeExcludeFilter} looks for delegates.
 */
final class RoleInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        boolean agent = Roles.isAgent(context.getEnvironment());
        context.getBeanFactory().registerSingleton("kvreuseRoleScanFilter", new RoleScanFilter(agent));
    }
}
