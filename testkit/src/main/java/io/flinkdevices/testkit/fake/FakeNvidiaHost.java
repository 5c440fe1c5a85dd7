package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.FakeExecutable.Response;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Locale;
import java.util.Objects;

/**
 * A fake {@code nvidia-smi} on a {@link FakeHost}, printing what the real tool prints for common
 * data-center GPUs. It answers exactly the queries NVIDIA drivers of flink-devices and Flink's own
 * {@code nvidia-gpu-discovery.sh} make:
 *
 * <ul>
 *   <li>{@link #QUERY} (index, UUID, name, memory, PCI bus id, compute capability, MIG mode; CSV
 *       without header and units). A host built with {@link Builder#oldDriver()} answers it like a
 *       driver older than 510: exit code 2 and {@code Field "compute_cap" is not a valid field to
 *       query.}, and answers {@link #QUERY_WITHOUT_COMPUTE_CAP} instead;
 *   <li>{@code -L}: {@code GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)} lines, each followed by
 *       its {@code MIG 1g.10gb Device 0: (UUID: MIG-...)} lines when MIG is on;
 *   <li>{@code --query-gpu=index --format=csv,noheader}, the query of Flink's script.
 * </ul>
 *
 * <p>Any other call exits with code 2 and a usage hint on stderr. Example:
 *
 * <pre>{@code
 * Path smi = FakeNvidiaHost.builder()
 *         .gpus(FakeNvidiaHost.Model.H100_SXM_80GB, 8)
 *         .gpu(FakeNvidiaHost.Model.A100_SXM_80GB, "1g.10gb", "1g.10gb", "3g.40gb")  // MIG on
 *         .installOn(host);
 * }</pre>
 *
 * <p>UUIDs are deterministic: {@link #gpuUuid(int)} and {@link #migUuid(int, int)}.
 *
 * <p>{@link Builder#install(FakeHost)} also answers {@link #MONITOR_QUERY} and writes the state of
 * a stand-in NVML; the {@link InstalledNvidiaHost} it returns changes both while a cluster runs (a
 * GPU disappears, an Xid or ECC event, utilisation and memory that move).
 */
@PublicEvolving
public final class FakeNvidiaHost {

    /**
     * The query the flink-devices NVIDIA driver makes, as its arguments: what it lists of each GPU,
     * with the clock throttle reasons that order GPUs the hardware slows down last.
     */
    public static final List<String> QUERY =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current,"
                            + "clocks_throttle_reasons.active",
                    "--format=csv,noheader,nounits");

    /** The query the driver retries with where nvidia-smi refuses {@code clocks_throttle_reasons.active}. */
    public static final List<String> QUERY_WITHOUT_THROTTLE =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current",
                    "--format=csv,noheader,nounits");

    /** The query the driver retries with on drivers older than 510. */
    public static final List<String> QUERY_WITHOUT_COMPUTE_CAP =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,mig.mode.current",
                    "--format=csv,noheader,nounits");

    /**
     * The metrics query of the driver's monitor where NVML does not load: one run per interval
     * for all GPUs; answered from the {@link InstalledNvidiaHost}'s run-time values.
     */
    public static final List<String> MONITOR_QUERY =
            List.of(
                    "--query-gpu=uuid,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,"
                            + "power.draw,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
                            + "clocks_throttle_reasons.active",
                    "--format=csv,noheader,nounits");

    /** The query of Flink 2.3.0's {@code nvidia-gpu-discovery.sh}. */
    public static final List<String> FLINK_SCRIPT_QUERY =
            List.of("--query-gpu=index", "--format=csv,noheader");

    /** A GPU model as {@code nvidia-smi} names and measures it. */
    @PublicEvolving
    public enum Model {
        /** NVIDIA A100 80GB SXM: compute capability 8.0, MIG capable. */
        A100_SXM_80GB("NVIDIA A100-SXM4-80GB", 81920, "8.0", true),
        /** NVIDIA A100 40GB PCIe: compute capability 8.0, MIG capable. */
        A100_PCIE_40GB("NVIDIA A100-PCIE-40GB", 40960, "8.0", true),
        /** NVIDIA H100 80GB SXM: compute capability 9.0, MIG capable. */
        H100_SXM_80GB("NVIDIA H100 80GB HBM3", 81559, "9.0", true),
        /** NVIDIA T4: compute capability 7.5, no MIG ({@code [N/A]} MIG mode). */
        T4("Tesla T4", 15360, "7.5", false),
        /** NVIDIA V100: compute capability 7.0, no MIG. */
        V100_SXM2_32GB("Tesla V100-SXM2-32GB", 32768, "7.0", false);

        private final String smiName;
        private final long memoryMib;
        private final String computeCap;
        private final boolean migCapable;

        Model(String smiName, long memoryMib, String computeCap, boolean migCapable) {
            this.smiName = smiName;
            this.memoryMib = memoryMib;
            this.computeCap = computeCap;
            this.migCapable = migCapable;
        }

        /** The name {@code nvidia-smi} prints. */
        public String smiName() {
            return smiName;
        }

        /** Total memory in MiB as {@code nvidia-smi} prints it. */
        public long memoryMib() {
            return memoryMib;
        }

        /** Compute capability, e.g. {@code 9.0}. */
        public String computeCap() {
            return computeCap;
        }

        /** Whether the model supports MIG. */
        public boolean migCapable() {
            return migCapable;
        }
    }

    private FakeNvidiaHost() {}

    /** Starts a host description. */
    public static Builder builder() {
        return new Builder();
    }

    /** Installs {@code nvidia-smi} listing {@code count} H100 GPUs, MIG off; returns its path. */
    public static Path installH100s(FakeHost host, int count) {
        return builder().gpus(Model.H100_SXM_80GB, count).installOn(host);
    }

    /** The UUID of GPU {@code index}. */
    public static String gpuUuid(int index) {
        return String.format(Locale.ROOT, "GPU-5f1c2b7e-0d6a-4c1e-9b3f-%012d", index);
    }

    /** The UUID of MIG device {@code device} of GPU {@code gpu}. */
    public static String migUuid(int gpu, int device) {
        return String.format(Locale.ROOT, "MIG-7c3e9a1d-4b2f-5e8a-a6c0-%06d%06d", gpu, device);
    }

    /** The PCI bus id of GPU {@code index} as {@code nvidia-smi} prints it. */
    public static String pciBusId(int index) {
        return String.format(Locale.ROOT, "00000000:%02X:00.0", 0x07 + index * 0x10);
    }

    /** Builds the fake tool's answers. */
    @PublicEvolving
    public static final class Builder {

        private final List<Model> models = new ArrayList<>();
        private final List<List<String>> migProfiles = new ArrayList<>();
        /** GPUs removed at run time ({@link InstalledNvidiaHost#removeGpu(int)}): left out of every listing. */
        final Set<Integer> removed = new HashSet<>();
        private boolean oldDriver;
        private boolean windowsLineEnds;
        private boolean optionalFieldsLeftOut;

        private Builder() {}

        /** Adds {@code count} GPUs of {@code model} with MIG off. */
        public Builder gpus(Model model, int count) {
            for (int i = 0; i < count; i++) {
                gpu(model);
            }
            return this;
        }

        /**
         * Adds one GPU of {@code model}; with {@code migProfiles} MIG is on and the GPU holds one
         * MIG device per profile given (e.g. {@code 1g.10gb}).
         *
         * @throws IllegalArgumentException when MIG devices are given for a model without MIG
         */
        public Builder gpu(Model model, String... migProfiles) {
            Objects.requireNonNull(model, "model");
            if (migProfiles.length > 0 && !model.migCapable()) {
                throw new IllegalArgumentException(model + " does not support MIG");
            }
            models.add(model);
            this.migProfiles.add(List.of(migProfiles));
            return this;
        }

        /** Behaves like a driver older than 510, which does not know the compute_cap field. */
        public Builder oldDriver() {
            this.oldDriver = true;
            return this;
        }

        /** Ends lines with CR LF, as output passed through some wrappers does. */
        public Builder windowsLineEnds() {
            this.windowsLineEnds = true;
            return this;
        }

        /**
         * What {@code nvidia-smi} prints for {@link #QUERY} (or the old driver's query), every GPU
         * idle (throttle reasons {@code 0x0000000000000001}).
         */
        public String queryOutput() {
            return queryOutput(i -> 0x1L, true);
        }

        /**
         * The listing with each GPU's clock throttle reasons from {@code throttle} (by index);
         * without the throttle column where {@code withThrottle} is false ({@link
         * #QUERY_WITHOUT_THROTTLE}) and for an old driver.
         */
        String queryOutput(java.util.function.IntToLongFunction throttle, boolean withThrottle) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < models.size(); i++) {
                if (removed.contains(i)) {
                    continue;
                }
                Model m = models.get(i);
                String migMode =
                        !m.migCapable()
                                ? "[N/A]"
                                : migProfiles.get(i).isEmpty() ? "Disabled" : "Enabled";
                // a GPU in a bad state, or a vGPU, reports [N/A] for what it cannot read
                String unknown = "[N/A]";
                sb.append(i)
                        .append(", ")
                        .append(gpuUuid(i))
                        .append(", ")
                        .append(m.smiName())
                        .append(", ")
                        .append(optionalFieldsLeftOut ? unknown : m.memoryMib())
                        .append(", ")
                        .append(optionalFieldsLeftOut ? unknown : pciBusId(i));
                if (!oldDriver) {
                    sb.append(", ").append(optionalFieldsLeftOut ? unknown : m.computeCap());
                }
                sb.append(", ").append(migMode);
                if (!oldDriver && withThrottle) {
                    sb.append(String.format(Locale.ROOT, ", 0x%016x", throttle.applyAsLong(i)));
                }
                sb.append(eol());
            }
            return sb.toString();
        }

        /** What {@code nvidia-smi -L} prints. */
        public String listOutput() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < models.size(); i++) {
                if (removed.contains(i)) {
                    continue;
                }
                sb.append("GPU ")
                        .append(i)
                        .append(": ")
                        .append(models.get(i).smiName())
                        .append(" (UUID: ")
                        .append(gpuUuid(i))
                        .append(")")
                        .append(eol());
                List<String> profiles = migProfiles.get(i);
                for (int d = 0; d < profiles.size(); d++) {
                    sb.append(
                                    String.format(
                                            Locale.ROOT,
                                            "  MIG %-11s Device %2d: (UUID: %s)",
                                            profiles.get(d),
                                            d,
                                            migUuid(i, d)))
                            .append(eol());
                }
            }
            return sb.toString();
        }

        /** What Flink's script query prints: one index per line. */
        public String indexOutput() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < models.size(); i++) {
                if (removed.contains(i)) {
                    continue;
                }
                sb.append(i).append(eol());
            }
            return sb.toString();
        }

        /** Whether the host asked to leave optional fields out ({@link FakeHost#optionalFieldsLeftOut()}). */
        boolean leavesOutOptionalFields() {
            return optionalFieldsLeftOut;
        }

        /** The GPUs' models, in index order. */
        List<Model> models() {
            return List.copyOf(models);
        }

        /** The MIG profiles of GPU {@code index}; empty with MIG off. */
        List<String> migProfiles(int index) {
            return migProfiles.get(index);
        }

        String eol() {
            return windowsLineEnds ? "\r\n" : "\n";
        }

        /** The fake program, not yet installed. */
        public FakeExecutable.Builder program() {
            FakeExecutable.Builder b = FakeExecutable.named("nvidia-smi");
            if (oldDriver) {
                String unknown =
                        "Field \"compute_cap\" is not a valid field to query.\n\n"
                                + "Run 'nvidia-smi --help-query-gpu' for a list of valid fields.\n";
                b.whenArguments(QUERY, Response.failure(2, "").withStdout(unknown))
                        .whenArguments(QUERY_WITHOUT_COMPUTE_CAP, Response.success(queryOutput()));
            } else {
                b.whenArguments(QUERY, Response.success(queryOutput()))
                        .whenArguments(QUERY_WITHOUT_THROTTLE, Response.success(queryOutput(i -> 0x1L, false)));
            }
            return b.whenArguments(List.of("-L"), Response.success(listOutput()))
                    .whenArguments(FLINK_SCRIPT_QUERY, Response.success(indexOutput()))
                    .exitCode(2)
                    .stderr("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
        }

        /**
         * Installs the fake {@code nvidia-smi} in {@code host}'s {@code bin/}; returns its path.
         * On a host that asks for it ({@link FakeHost#optionalFieldsLeftOut()}) the query prints
         * {@code [N/A]} for memory, PCI bus id and compute capability, and the stand-in NVML answers
         * {@code NVML_ERROR_NOT_SUPPORTED} for the compute capability (NVML's one optional fact).
         */
        public Path installOn(FakeHost host) {
            return install(host).smi().path();
        }

        /**
         * Installs the fake {@code nvidia-smi} and writes the state a stand-in {@code
         * libnvidia-ml.so.1} reads ({@link InstalledNvidiaHost#nvmlState()}); returns the installed
         * host, whose GPUs change while a cluster runs. This builder belongs to it from now on.
         */
        public InstalledNvidiaHost install(FakeHost host) {
            optionalFieldsLeftOut = host.optionalFieldsLeftOut();
            return new InstalledNvidiaHost(host, this);
        }
    }
}
