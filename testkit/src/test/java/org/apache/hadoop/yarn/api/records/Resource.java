package org.apache.hadoop.yarn.api.records;

/**
 * A stand-in for Hadoop's class, so that the mutation run can plant a driver class that uses
 * Hadoop and show the architecture rules catching it.
 */
public class Resource {

    /** Something to call. */
    public static long newInstance(long vcores) {
        return vcores;
    }
}
