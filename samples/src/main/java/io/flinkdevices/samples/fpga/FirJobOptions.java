package io.flinkdevices.samples.fpga;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/** The FIR job's parameters; see {@link FirJob} for what each means. */
public final class FirJobOptions {

    /** Where the subtasks' devices come from. */
    public enum Devices {
        /** flink-devices' OpenCL driver plugin in the TaskManager. */
        DRIVER,
        /** A device this process lists, fixed in the job graph. */
        LOCAL,
        /** No device: the CPU path. */
        CPU
    }


    Devices devices = Devices.DRIVER;
    int batch = 4096;
    int slots = 3;
    long timeoutMs = 60_000;
    int block = 1024;
    long samples = 2_000_000L;
    int sensors = 16;
    int taps = 64;
    int parallelism = 2;
    String bitstream;
    String deviceTypes = "ACCELERATOR,CPU";
    String platformPattern = ".*";

    /** Parses {@code --name value} pairs; see the class comment. */
    public static FirJobOptions parse(String... args) {
        return parse(new FirJobOptions(), args);
    }

    /**
     * Parses {@code --name value} (or {@code --name=value}) pairs over the values already in
     * {@code o}. Every value is checked here, before anything starts; whether a {@code
     * --bitstream} file exists is left to the driver, which names its own key.
     *
     * @throws IllegalArgumentException with a one-line message naming the option, e.g.
     *     {@code --batch: expected a positive integer, got 'abc'}; for an unknown option the
     *     message is {@code unknown option --x}
     */
    public static FirJobOptions parse(FirJobOptions o, String... args) {
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            String v;
            int eq = key.indexOf('=');
            if (key.startsWith("--") && eq > 0) {
                v = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else if (!OPTIONS.contains(key)) {
                v = null;
            } else if (i + 1 >= args.length) {
                throw new IllegalArgumentException(key + ": needs a value");
            } else if (OPTIONS.contains(args[i + 1])) {
                throw new IllegalArgumentException(key + ": needs a value, got the option " + args[i + 1]);
            } else {
                v = args[++i];
            }
            switch (key) {
                case "--devices":
                    try {
                        o.devices = Devices.valueOf(v.trim().toUpperCase(Locale.ROOT));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(key + ": expected driver, local or cpu, got '" + v + "'");
                    }
                    break;
                case "--batch":
                    o.batch = (int) inRange(key, v, 1, FirBatchArgs.MAX_BATCH);
                    break;
                case "--slots":
                    o.slots = (int) inRange(key, v, 1, FirBatchArgs.MAX_SLOTS);
                    break;
                case "--timeout-ms":
                    o.timeoutMs = inRange(key, v, 1, FirBatchArgs.MAX_TIMEOUT_MS);
                    break;
                case "--block":
                    o.block = (int) inRange(key, v, 1, MAX_BLOCK);
                    break;
                case "--samples":
                    o.samples = positiveLong(key, v);
                    break;
                case "--sensors":
                    o.sensors = positiveInt(key, v);
                    break;
                case "--taps":
                    o.taps = positiveInt(key, v);
                    break;
                case "--parallelism":
                    o.parallelism = positiveInt(key, v);
                    break;
                case "--bitstream":
                    o.bitstream = v.isBlank() ? null : v;
                    break;
                case "--device-types":
                    try {
                        DeviceTypes.parse(v);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(
                                key + ": expected a comma list of ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL, got '"
                                        + v
                                        + "'");
                    }
                    o.deviceTypes = v;
                    break;
                case "--platform-pattern":
                    try {
                        Pattern.compile(v);
                    } catch (java.util.regex.PatternSyntaxException e) {
                        throw new IllegalArgumentException(
                                key + ": expected a Java regular expression, got '" + v + "' (" + e.getDescription() + ")");
                    }
                    o.platformPattern = v;
                    break;
                default:
                    throw new IllegalArgumentException("unknown option " + key);
            }
        }
        return o;
    }

    /** The options {@link #parse} knows, each followed by a value. */
    public static final List<String> OPTIONS =
            List.of(
                    "--devices",
                    "--batch",
                    "--slots",
                    "--timeout-ms",
                    "--block",
                    "--samples",
                    "--sensors",
                    "--taps",
                    "--parallelism",
                    "--bitstream",
                    "--device-types",
                    "--platform-pattern");

    /** Largest source block: 2^16 samples. */
    public static final int MAX_BLOCK = 1 << 16;

    private static long inRange(String key, String v, long min, long max) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": expected an integer in " + min + ".." + max + ", got '" + v + "'");
        }
        return FirBatchArgs.check(key, n, min, max);
    }

    private static int positiveInt(String key, String v) {
        long n = positiveLong(key, v);
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + ": expected a positive integer up to " + Integer.MAX_VALUE + ", got '" + v + "'");
        }
        return (int) n;
    }

    private static long positiveLong(String key, String v) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": expected a positive integer, got '" + v + "'");
        }
        if (n <= 0) {
            throw new IllegalArgumentException(key + ": expected a positive integer, got '" + v + "'");
        }
        return n;
    }

    /** Where the subtasks' devices come from. */
    public Devices devices() {
        return devices;
    }

    /** The batch size. */
    public int batch() {
        return batch;
    }

    /** Batches in flight per subtask. */
    public int slots() {
        return slots;
    }

    /** How long a batch may take on the device, in ms. */
    public long timeoutMs() {
        return timeoutMs;
    }

    /** Samples per source block. */
    public int block() {
        return block;
    }

    /**
     * The batching arguments.
     *
     * @throws IllegalArgumentException naming the argument and its range, for a value set through
     *     a setter that cannot work
     */
    public FirBatchArgs batchArgs() {
        return new FirBatchArgs(batch, slots, timeoutMs);
    }

    /** Sensors the samples are spread over. */
    public int sensors() {
        return sensors;
    }

    /** Taps of the filter. */
    public int taps() {
        return taps;
    }

    /** Parallelism of the filter. */
    public int parallelism() {
        return parallelism;
    }

    /** The bitstream path, or null to build the kernel from source. */
    public String bitstream() {
        return bitstream;
    }

    /** The platform name pattern (Java regex, {@code find()}). */
    public String platformPattern() {
        return platformPattern;
    }

    /** The OpenCL device types to use. */
    public String deviceTypes() {
        return deviceTypes;
    }

    /** Samples the job filters. */
    public long samples() {
        return samples;
    }

    /** Sets where devices come from. */
    public FirJobOptions devices(Devices d) {
        this.devices = d;
        return this;
    }

    /** Sets the batch size. */
    public FirJobOptions batch(int b) {
        this.batch = b;
        return this;
    }

    /** Sets the batches in flight per subtask. */
    public FirJobOptions slots(int n) {
        this.slots = n;
        return this;
    }

    /** Sets how long a batch may take on the device. */
    public FirJobOptions timeoutMs(long ms) {
        this.timeoutMs = ms;
        return this;
    }

    /** Sets the samples per source block. */
    public FirJobOptions block(int n) {
        this.block = n;
        return this;
    }

    /** Sets the number of samples. */
    public FirJobOptions samples(long n) {
        this.samples = n;
        return this;
    }

    /** Sets the number of sensors. */
    public FirJobOptions sensors(int n) {
        this.sensors = n;
        return this;
    }

    /** Sets the number of taps. */
    public FirJobOptions taps(int n) {
        this.taps = n;
        return this;
    }

    /** Sets the parallelism of the filter. */
    public FirJobOptions parallelism(int p) {
        this.parallelism = p;
        return this;
    }

    /** Sets the bitstream path (null: build from source). */
    public FirJobOptions bitstream(String path) {
        this.bitstream = path;
        return this;
    }

    /** Sets the OpenCL device types to use, as the driver's {@code device.types}. */
    public FirJobOptions deviceTypes(String types) {
        this.deviceTypes = types;
        return this;
    }

    /** Sets the platform name pattern, as the driver's {@code platform.pattern}. */
    public FirJobOptions platformPattern(String regex) {
        this.platformPattern = regex;
        return this;
    }
}
