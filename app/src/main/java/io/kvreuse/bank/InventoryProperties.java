package io.kvreuse.bank;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Inventory ingestion tuning ({@code kvreuse.inventory.*}).
 *
 * @param storeTimeout longest an event batch or snapshot may spend in PostgreSQL, lock waits
 *     included; past it the request is answered {@code 503 store-unavailable} and nothing of it is
 *     applied (default 5s)
 */
@ConfigurationProperties("kvreuse.inventory")
record InventoryProperties(Duration storeTimeout) {

    InventoryProperties {
        storeTimeout = storeTimeout == null ? Duration.ofSeconds(5) : storeTimeout;
        if (!storeTimeout.isPositive()) {
            throw new IllegalArgumentException("kvreuse.inventory.store-timeout must be positive");
        }
    }
}
