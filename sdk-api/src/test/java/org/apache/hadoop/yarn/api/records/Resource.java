package org.apache.hadoop.yarn.api.records;

/** A stand-in for the real class, so that a test can show an ArchUnit rule catching its use. */
public class Resource {
    public static int touch() {
        return 0;
    }
}
