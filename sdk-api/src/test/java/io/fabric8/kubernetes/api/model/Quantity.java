package io.fabric8.kubernetes.api.model;

/** A stand-in for the real class, so that a test can show an ArchUnit rule catching its use. */
public class Quantity {
    public static int touch() {
        return 0;
    }
}
