/**
 * The shared test kit: one client of the kvreuse HTTP API ({@link io.kvreuse.testkit.KvReuseClient}),
 * the request bodies it sends ({@link io.kvreuse.testkit.Requests}), the sample layout contracts
 * ({@link io.kvreuse.testkit.SampleContracts}) and a fleet builder ({@link io.kvreuse.testkit.FleetBuilder})
 * used by app tests, system tests, benchmarks and the simulated engines. JDK and Jackson only.
 */
package io.kvreuse.testkit;
