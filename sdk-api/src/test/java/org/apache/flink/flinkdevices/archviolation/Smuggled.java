package org.apache.flink.flinkdevices.archviolation;

/** A class of ours under org.apache.flink, which a plugin class loader would never load. */
public final class Smuggled {}
