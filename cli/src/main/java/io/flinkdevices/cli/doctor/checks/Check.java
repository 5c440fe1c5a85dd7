package io.flinkdevices.cli.doctor.checks;

/**
 * One thing {@code doctor} checks. A new check is a new implementation, listed once in {@code
 * Doctor}; an instance lives for one run, so it may remember what it has seen.
 */
public interface Check {

    /** Findings about the configuration as a whole; every check's come before any resource's. */
    default void checkConfiguration(CheckedConfig config, Findings out) {}

    /** Findings about one resource; resources are checked in the order they are listed. */
    default void checkResource(CheckedResource resource, Findings out) {}
}
