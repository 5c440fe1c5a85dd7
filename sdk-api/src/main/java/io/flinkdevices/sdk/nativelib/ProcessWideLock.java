package io.flinkdevices.sdk.nativelib;

import org.apache.flink.annotation.PublicEvolving;

/**
 * A monitor shared by every class loader of the JVM, for native runtimes that must not be
 * called from two threads at once.
 *
 * <p>Why: in a TaskManager a driver runs in Flink's plugin class loader and a job in its
 * user-code class loader, each with its own copy of the binding and of this SDK, yet both reach
 * the same native runtime (one OpenCL ICD such as oclgrind, one vendor FPGA runtime). A {@code
 * static final Object} lock exists once per class loader and so excludes nothing across them.
 * {@link #of(String)} returns the JVM's canonical (interned) string for the name, which is one
 * object however many copies of this class are loaded.
 *
 * <pre>{@code
 * synchronized (ProcessWideLock.of("OpenCL")) {
 *     CL.clBuildProgram(program, 1, devices, options, null, null);
 * }
 * }</pre>
 *
 * <p>Hold it only around calls into the runtime, never while waiting for something else. Code
 * outside flink-devices that synchronizes on the same string would share it, which is why the
 * name is prefixed with this class's name.
 */
@PublicEvolving
public final class ProcessWideLock {

    private static final String PREFIX = "io.flinkdevices.sdk.nativelib.ProcessWideLock:";

    private ProcessWideLock() {}

    /**
     * The monitor for {@code runtime}: the same object for the same name in every class loader of
     * this JVM.
     *
     * @param runtime what the lock guards, for example {@code OpenCL}; not blank
     * @throws IllegalArgumentException when {@code runtime} is blank
     */
    public static Object of(String runtime) {
        if (runtime == null || runtime.isBlank()) {
            throw new IllegalArgumentException("a process-wide lock needs a name, got '" + runtime + "'");
        }
        return (PREFIX + runtime).intern();
    }
}
