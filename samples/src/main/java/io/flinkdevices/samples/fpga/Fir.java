package io.flinkdevices.samples.fpga;

/**
 * The FIR filter of the sample job and its CPU reference.
 *
 * <p>{@code y[n] = sum_{k=0}^{taps-1} h[k] * x[n-k]}, with {@code x[n] = 0} before a sensor's first
 * sample, summed in float from {@code k = 0} upwards. The OpenCL kernel ({@code fir.cl}) sums in
 * the same order and turns floating-point contraction off, so on a device that honours {@code
 * FP_CONTRACT OFF} (PoCL, oclgrind) every output equals this reference bit for bit. A device that
 * fuses multiply and add anyway stays within {@link #tolerance(float[], float)}.
 */
public final class Fir {

    private Fir() {}

    /**
     * A windowed-sinc low-pass filter of {@code taps} coefficients (Hamming window, cut-off at a
     * quarter of the sample rate), normalised to unit gain at DC. Deterministic: every subtask and
     * every test builds the same coefficients.
     */
    public static float[] lowPass(int taps) {
        if (taps < 1) {
            throw new IllegalArgumentException("a FIR filter needs at least 1 tap but got " + taps);
        }
        double[] h = new double[taps];
        double sum = 0;
        double mid = (taps - 1) / 2.0;
        for (int k = 0; k < taps; k++) {
            double t = k - mid;
            double sinc = t == 0 ? 0.5 : Math.sin(Math.PI * 0.5 * t) / (Math.PI * t);
            double window = taps == 1 ? 1 : 0.54 - 0.46 * Math.cos(2 * Math.PI * k / (taps - 1));
            h[k] = sinc * window;
            sum += h[k];
        }
        float[] out = new float[taps];
        for (int k = 0; k < taps; k++) {
            out[k] = (float) (h[k] / sum);
        }
        return out;
    }

    /**
     * One output of the filter in the kernel's summation order: {@code history} holds the {@code
     * taps - 1} samples before {@code x}, oldest first.
     */
    static float output(float[] taps, float[] history, float x) {
        int n = taps.length;
        float acc = 0f;
        acc += taps[0] * x;
        for (int k = 1; k < n; k++) {
            acc += taps[k] * history[n - 1 - k];
        }
        return acc;
    }

    /** Filters one whole stream from its first sample: the reference the tests compare with. */
    public static float[] filter(float[] taps, float[] xs) {
        float[] ys = new float[xs.length];
        for (int i = 0; i < xs.length; i++) {
            float acc = 0f;
            for (int k = 0; k < taps.length; k++) {
                float x = i - k >= 0 ? xs[i - k] : 0f;
                acc += taps[k] * x;
            }
            ys[i] = acc;
        }
        return ys;
    }

    /**
     * How far a device that fuses multiply-add may differ from the reference for inputs of
     * magnitude at most {@code maxAbsInput}: {@code taps * 2^-22 * sum|h| * maxAbsInput}, a few
     * float roundings per tap.
     */
    public static float tolerance(float[] taps, float maxAbsInput) {
        double sumAbs = 0;
        for (float h : taps) {
            sumAbs += Math.abs(h);
        }
        return (float) (taps.length * Math.scalb(1.0, -22) * sumAbs * maxAbsInput);
    }

    /** One period of a sine in {@value #SINE_STEPS} steps (and the first again), from StrictMath: the same in every JVM. */
    private static final int SINE_BITS = 12;

    private static final int SINE_STEPS = 1 << SINE_BITS;

    private static final double[] SINE = new double[SINE_STEPS + 1];

    static {
        for (int i = 0; i <= SINE_STEPS; i++) {
            SINE[i] = StrictMath.sin(2 * Math.PI * i / SINE_STEPS);
        }
    }

    /** Phase steps per sample: 0.01 of a period plus up to 0.37 more, from the sensor (32-bit fixed point). */
    private static final long MIN_STEP = (long) (0.01 * 0x1p32);

    private static final long STEP_RANGE = (long) (0.37 * 0x1p32);

    /**
     * The deterministic test signal: sensor {@code sensor}'s sample number {@code seq}, a sine
     * whose frequency depends on the sensor plus a little pseudo-random noise, in [-1.1, 1.1].
     *
     * <p>The phase is integer arithmetic (32-bit fixed point, so sample number 10^9 is as exact
     * and as cheap as sample 0) and the sine a linear interpolation in a table: a few nanoseconds
     * a sample. {@code Math.sin(2 * PI * f * seq)} with a double {@code %} for the frequency cost
     * about 170 ns a sample at large {@code seq} (the large-argument reduction), more than the
     * whole batched filter spends on a sample: the source was the job's bottleneck.
     */
    public static float signal(int sensor, long seq) {
        // the golden ratio's fraction in 32-bit fixed point, times the sensor, mod 1
        long spread = (sensor * 0x9E3779B9L) & 0xFFFF_FFFFL;
        long step = MIN_STEP + ((STEP_RANGE * spread) >>> 32);
        long phase = (seq * step) & 0xFFFF_FFFFL;
        int index = (int) (phase >>> (32 - SINE_BITS));
        double fraction = (phase & ((1L << (32 - SINE_BITS)) - 1)) * 0x1p-20;
        double sine = SINE[index] + (SINE[index + 1] - SINE[index]) * fraction;
        long h = (seq * 0x9E3779B97F4A7C15L) ^ (sensor * 0xC2B2AE3D27D4EB4FL);
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        double noise = ((h >>> 11) * 0x1.0p-53 - 0.5) * 0.2;
        return (float) (sine + noise);
    }
}
