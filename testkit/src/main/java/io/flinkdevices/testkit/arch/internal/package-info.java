/** Rule building blocks behind {@code DriverArchitectureRules}; not part of the testkit's API. */
package io.flinkdevices.testkit.arch.internal;
