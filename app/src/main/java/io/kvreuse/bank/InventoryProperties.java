package io.kvreuse.bank;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Inventory ingestion tuning ({@code kvreuse.inventory.*}).
 *
 * @param storeTimeout longest one statement of an event batch or snapshot may run in PostgreSQL,
 *     lock waits included (the wait for the bank's row lock may take three times this, the request
 *     as a whole four times); past it the request is answered {@code 503 store-unavailable} and
 *     nothing of it is applied (default 10s)
 */
@ConfigurationProperties("kvreuse.inventory")
record InventoryProperties(Duration storeTimeout) {

    InventoryProperties {
        storeTimeout = storeTimeout == null ? Duration.ofSeconds(10) : storeTimeout;
        if (!storeTimeout.isPositive()) {
            throw new IllegalArgumentException("kvreuse.inventory.store-timeout must be positive");
        }
    }
}
