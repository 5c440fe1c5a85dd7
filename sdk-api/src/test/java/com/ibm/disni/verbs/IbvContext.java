package com.ibm.disni.verbs;

/** A stand-in for the real class, so that a test can show an ArchUnit rule catching its use. */
public class IbvContext {
    public static int touch() {
        return 0;
    }
}
