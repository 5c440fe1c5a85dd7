/**
 * What the real host offers, for tests that assert one branch where a vendor package is installed
 * and another where it is not: {@link io.flinkdevices.testkit.host.HostLibraries}.
 */
package io.flinkdevices.testkit.host;
