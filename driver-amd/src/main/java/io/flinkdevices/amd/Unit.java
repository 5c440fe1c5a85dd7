package io.flinkdevices.amd;

/** The values of the {@code unit} parameter: what one unit of {@code amount} is. */
enum Unit {
    /** A whole GPU (all its partitions, on a partitioned GPU). */
    GPU,
    /** One compute partition of a partitioned GPU (a whole GPU where it is not partitioned). */
    PARTITION
}
