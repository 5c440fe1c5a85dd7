/**
 * The driver contract kit: extend {@link io.flinkdevices.testkit.contract.DriverContractKit},
 * answer its hooks, and JUnit 5 runs every case of the contract on the driver, grouped by concern
 * in {@code @Nested} suites whose Javadoc says what each case proves.
 */
package io.flinkdevices.testkit.contract;
