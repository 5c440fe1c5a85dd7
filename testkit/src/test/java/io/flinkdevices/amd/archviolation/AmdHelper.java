package io.flinkdevices.amd.archviolation;

/** Deliberately violating test fixture: an "AMD driver" class another driver reaches into. */
public final class AmdHelper {
    private AmdHelper() {}

    /** Something another driver should not call. */
    public static String vendor() {
        return "amd";
    }
}
