package io.flinkdevices.samples.gpu;

/** What opening a GPU path gave: a backend, or the one-line reason there is none. */
final class GpuOpened {

    /** The opened backend; null when {@link #reason} says why there is none. */
    final MatVecBackend backend;
    /** Why the path could not open; null when it did. */
    final String reason;

    private GpuOpened(MatVecBackend backend, String reason) {
        this.backend = backend;
        this.reason = reason;
    }

    static GpuOpened of(MatVecBackend backend) {
        return new GpuOpened(backend, null);
    }

    static GpuOpened failed(String reason) {
        return new GpuOpened(null, reason);
    }
}
