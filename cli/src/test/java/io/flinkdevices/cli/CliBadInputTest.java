package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Bad command lines and Flink configurations through the whole CLI ({@code discover}, {@code
 * doctor}, {@code render}), one row each, the way {@code BadInputTable} does it for the drivers.
 *
 * <p>Purpose: an operator who mistypes an option or a key learns what and where from one run.
 * How it works: each row writes its {@code config.yaml} (by default a good one: the testkit's
 * simulated GPU, amount 2 of 4), runs the CLI in-process on its own thread with an empty
 * environment and classifies the answer: <em>clear error</em> = a non-zero exit whose stdout or
 * stderr contains every expected fragment (the full option or key, what was expected, the OS
 * reason) and no stack frame; <em>accepted correctly</em> = exit 0 and the row's check holds (an
 * input that is fine, such as {@code --flink-version 1.20}); anything else is <em>other</em>:
 * silently wrong (exit 0 where an error was due, or a failed check), a hang (no answer within 30
 * s), a stack trace, or a vague message (a fragment missing). What must hold: no row is other.
 * Needs: {@code /dev/full} for three rows (Linux).
 */
class CliBadInputTest {

    private static final Pattern STACK_FRAME = Pattern.compile("(?m)^\\s+at [\\w$.]+\\(");
    private static final long BOUND_MS = 30_000;
    private static final String SIM = SimulatedDevices.GPU_FACTORY_CLASS;

    @TempDir Path home;

    /** Prepares a row's conf dir. */
    @FunctionalInterface
    interface Setup {
        void into(Path conf) throws Exception;
    }

    /** The good configuration with {@code keyValues} set (an empty value removes the key). */
    private static Setup good(String... keyValues) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("external-resources", "gpu");
        config.put("external-resource.gpu.driver-factory.class", SIM);
        config.put("external-resource.gpu.amount", "2");
        for (int i = 0; i < keyValues.length; i += 2) {
            if (keyValues[i + 1].isEmpty()) {
                config.remove(keyValues[i]);
            } else {
                config.put(keyValues[i], keyValues[i + 1]);
            }
        }
        List<String> lines = new ArrayList<>();
        config.forEach((k, v) -> lines.add(k + ": " + v));
        return lines(lines.toArray(String[]::new));
    }

    private static Setup lines(String... lines) {
        return conf -> Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");
    }

    private record Row(String input, Setup setup, List<String> args, List<String> fragments,
            Predicate<CliRun> accepted, String acceptedMeans) {}

    /** The rows, then their results. */
    private final List<Row> rows = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();

    /** A row that must end in a clear error; {conf}, {plugins} and {home} in args are replaced. */
    private void clear(String input, Setup setup, List<String> args, String... fragments) {
        rows.add(new Row(input, setup, args, List.of(fragments), null, null));
    }

    /** A row whose input is fine: exit 0 and {@code check} holds. */
    private void accepted(String input, Setup setup, List<String> args, String means, Predicate<CliRun> check) {
        rows.add(new Row(input, setup, args, List.of(), check, means));
    }

    private void skip(String input, String reason) {
        skipped.add(input + ": " + reason);
    }

    private static List<String> cmd(String... args) {
        return List.of(args);
    }

    /** {@code args} with {@code --conf-dir} and {@code --plugins-dir} appended. */
    private static List<String> on(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--conf-dir", "{conf}", "--plugins-dir", "{plugins}"));
        return all;
    }

    /** {@code render flink-operator} with a good image and version unless {@code args} give them. */
    private static List<String> operator(String... args) {
        List<String> all = new ArrayList<>(on("render", "flink-operator"));
        List<String> more = List.of(args);
        if (!more.contains("--image")) {
            all.addAll(List.of("--image", "flink:2.2"));
        }
        if (!more.contains("--flink-version")) {
            all.addAll(List.of("--flink-version", "2.2"));
        }
        all.addAll(more);
        return all;
    }

    private static List<String> plus(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }

    /** Makes something at a coordination file's path. */
    @FunctionalInterface
    private interface AtPath {
        void make(Path file) throws Exception;
    }

    /** A coordinated good configuration whose coordination file {conf}/gpu.coordination {@code make} makes. */
    private static Setup coordinatedAt(AtPath make) {
        return conf -> {
            Path f = conf.resolve("gpu.coordination");
            good("external-resource.gpu.param.coordination.enabled", "true",
                    "external-resource.gpu.param.coordination.file", f.toString()).into(conf);
            make.make(f);
        };
    }

    private static void mkfifo(Path p) throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", p.toString()).start();
        if (!mkfifo.waitFor(10, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
            throw new IllegalStateException("mkfifo " + p + " failed");
        }
    }

    /** {@code quarantine list|clear}: a coordinated good configuration unless the row changes it. */
    private void quarantineRows() {
        String file = home.resolve("gpu.coordination").toString();
        Setup coordinated = good("external-resource.gpu.param.coordination.enabled", "true",
                "external-resource.gpu.param.coordination.file", home.resolve("gpu.coordination").toString());
        clear("quarantine without list or clear", coordinated, cmd("quarantine", "--conf-dir", "{conf}"),
                "Missing subcommand of 'flink-devices quarantine': list or clear");
        clear("quarantine clear without --resource", coordinated, cmd("quarantine", "clear", "--all", "--conf-dir", "{conf}"),
                "--resource");
        clear("quarantine clear without --device or --all", coordinated,
                cmd("quarantine", "clear", "--resource", "gpu", "--conf-dir", "{conf}"), "--device", "--all");
        clear("quarantine clear with --device and --all", coordinated,
                cmd("quarantine", "clear", "--resource", "gpu", "--device", "0", "--all", "--conf-dir", "{conf}"),
                "--device", "--all", "mutually exclusive");
        clear("quarantine clear --device ''", coordinated,
                cmd("quarantine", "clear", "--resource", "gpu", "--device", "", "--conf-dir", "{conf}"),
                "--device: expected a device id but got an empty one");
        clear("quarantine clear of an unlisted resource", coordinated,
                cmd("quarantine", "clear", "--resource", "gpus", "--all", "--conf-dir", "{conf}"),
                "--resource: 'gpus' is not listed in external-resources (listed: gpu)");
        clear("quarantine clear of a resource without coordination", good(),
                cmd("quarantine", "clear", "--resource", "gpu", "--all", "--conf-dir", "{conf}"),
                "external-resource.gpu.param.coordination.enabled is not true");
        clear("quarantine clear of a device that is not out of service", coordinated,
                cmd("quarantine", "clear", "--resource", "gpu", "--device", "7", "--conf-dir", "{conf}"),
                "device '7' of resource gpu is not out of service in [" + file + "]", "nothing changed");
        clear("quarantine clear with a bad coordination.lock-timeout", good("external-resource.gpu.param.coordination.enabled", "true",
                        "external-resource.gpu.param.coordination.file", home.resolve("gpu.coordination").toString(),
                        "external-resource.gpu.param.coordination.lock-timeout", "forever"),
                cmd("quarantine", "clear", "--resource", "gpu", "--all", "--conf-dir", "{conf}"),
                "external-resource.gpu.param.coordination.lock-timeout: expected a positive duration such as '10 s' but got 'forever'");
        clear("quarantine list --resource of an unlisted resource", coordinated,
                cmd("quarantine", "list", "--resource", "rdma", "--conf-dir", "{conf}"),
                "--resource: 'rdma' is not listed in external-resources (listed: gpu)");
        accepted("quarantine clear --all with nothing out of service", coordinated,
                cmd("quarantine", "clear", "--resource", "gpu", "--all", "--conf-dir", "{conf}"),
                "nothing to clear, nothing created", r -> r.out().contains("No device of resource gpu was out of service")
                        && !Files.exists(home.resolve("gpu.coordination")));
        String key = "external-resource.gpu.param.coordination.file: {conf}/gpu.coordination";
        clear("quarantine list: coordination.file is a symbolic link", coordinatedAt(f ->
                        Files.createSymbolicLink(f, Files.writeString(f.resolveSibling("real"), ""))),
                cmd("quarantine", "list", "--conf-dir", "{conf}"), key + " is a symbolic link; coordination never follows one");
        clear("quarantine list: coordination.file is a folder", coordinatedAt(Files::createDirectories),
                cmd("quarantine", "list", "--conf-dir", "{conf}"), key + " is a folder, expected a file");
        clear("quarantine list: coordination.file is a FIFO", coordinatedAt(CliBadInputTest::mkfifo),
                cmd("quarantine", "list", "--conf-dir", "{conf}"), key + " is a FIFO (named pipe); expected a regular file");
        clear("quarantine list --json: its lock file is a FIFO",
                coordinatedAt(f -> mkfifo(f.resolveSibling("gpu.coordination.lock"))),
                cmd("quarantine", "list", "--json", "--conf-dir", "{conf}"),
                key + ".lock is a FIFO (named pipe); expected a regular file");
        clear("quarantine clear --all: coordination.file is a symbolic link", coordinatedAt(f ->
                        Files.createSymbolicLink(f, Files.writeString(f.resolveSibling("real"), ""))),
                cmd("quarantine", "clear", "--resource", "gpu", "--all", "--conf-dir", "{conf}"),
                key + " is a symbolic link; coordination never follows one");
        clear("quarantine clear --all: coordination.file is a FIFO", coordinatedAt(CliBadInputTest::mkfifo),
                cmd("quarantine", "clear", "--resource", "gpu", "--all", "--conf-dir", "{conf}"),
                key + " is a FIFO (named pipe); expected a regular file");
        accepted("quarantine list with nothing out of service", coordinated,
                cmd("quarantine", "list", "--conf-dir", "{conf}"),
                "says so", r -> r.out().contains("No device is out of service (gpu)"));
    }

    private void commandLineRows() {
        Setup good = good();
        clear("no command", good, cmd(), "Missing command");
        clear("unknown command discovr", good, cmd("discovr", "--conf-dir", "{conf}"), "'discovr'");
        clear("discover without --conf-dir", good, cmd("discover"), "--conf-dir");
        clear("doctor without --conf-dir", good, cmd("doctor"), "--conf-dir");
        clear("render kubernetes without --conf-dir", good, cmd("render", "kubernetes"), "--conf-dir");
        clear("render yarn without --conf-dir", good, cmd("render", "yarn"), "--conf-dir");
        clear("render flink-operator without --conf-dir", good,
                cmd("render", "flink-operator", "--image", "flink:2.2", "--flink-version", "2.2"), "--conf-dir");
        clear("render --conf-dir X without a deployment", good, cmd("render", "--conf-dir", "{conf}"),
                "Missing subcommand of 'flink-devices render': kubernetes, flink-operator or yarn");
        clear("--conf-dir X before the command", good, cmd("--conf-dir", "{conf}"),
                "Missing subcommand of 'flink-devices': discover, doctor, render or quarantine");
        clear("render kubernets (misspelt)", good, cmd("render", "kubernets", "--conf-dir", "{conf}"),
                "'kubernets'", "render kubernetes");
        clear("render helm (no such deployment)", good, cmd("render", "helm", "--conf-dir", "{conf}"),
                "Unknown subcommand of 'flink-devices render': 'helm'; expected kubernetes, flink-operator or yarn");
        clear("quarantine show (no such subcommand)", good, cmd("quarantine", "show", "--conf-dir", "{conf}"),
                "Unknown subcommand of 'flink-devices quarantine': 'show'; expected list or clear");
        clear("unknown option --verbose", good, plus(on("discover"), "--verbose"), "--verbose");
        clear("--conf-dir that does not exist", good, cmd("discover", "--conf-dir", "{home}/nope"),
                "--conf-dir: {home}/nope is not a directory");
        clear("--conf-dir ''", good, cmd("discover", "--conf-dir", ""), "--conf-dir", "config.yaml");
        clear("--conf-dir is a file", good, cmd("doctor", "--conf-dir", "{conf}/config.yaml"),
                "--conf-dir", "config.yaml");
        clear("conf dir without config.yaml", conf -> { }, on("discover"), "--conf-dir", "config.yaml",
                "does not exist");
        clear("conf dir with only a legacy flink-conf.yaml",
                conf -> Files.writeString(conf.resolve("flink-conf.yaml"), "external-resources: gpu\n"),
                on("doctor"), "flink-conf.yaml", "bin/migrate-config-file.sh");
        clear("config.yaml that does not parse", lines("external-resources: gpu", "external-resource.gpu.amount: [2"),
                on("doctor"), "--conf-dir: Flink cannot load its configuration", "config.yaml", "line 2");
        clear("config.yaml is a folder", conf -> Files.createDirectories(conf.resolve("config.yaml")),
                on("discover"), "--conf-dir", "config.yaml");
        clear("config.yaml is a FIFO",
                conf -> {
                    Process mkfifo = new ProcessBuilder("mkfifo", conf.resolve("config.yaml").toString()).start();
                    if (mkfifo.waitFor() != 0) {
                        throw new IllegalStateException("mkfifo failed");
                    }
                },
                on("doctor"), "--conf-dir", "config.yaml", "is not a regular file but a FIFO");
        clear("--plugins-dir that does not exist", good,
                cmd("discover", "--conf-dir", "{conf}", "--plugins-dir", "{home}/nope"),
                "--plugins-dir: {home}/nope is not a directory");
        clear("--plugins-dir is a file", good,
                cmd("discover", "--conf-dir", "{conf}", "--plugins-dir", "{conf}/config.yaml"),
                "--plugins-dir", "is not a directory");
        clear("--timeout soon", good, plus(on("discover"), "--timeout", "soon"), "--timeout",
                "'soon' is not a duration");
        clear("--timeout 0", good, plus(on("doctor"), "--timeout", "0"), "--timeout", "is not a duration from 1 ms to 1 d");
        clear("--timeout -5 s", good, plus(on("doctor"), "--timeout", "-5 s"), "--timeout");
        clear("--timeout ''", good, plus(on("discover"), "--timeout", ""), "--timeout");
        clear("--timeout 10 parsecs", good, plus(on("render", "kubernetes"), "--timeout", "10 parsecs"), "--timeout");
        clear("discover --json=maybe", good, plus(on("discover"), "--json=maybe"), "--json", "maybe");
        clear("doctor --no-devices=maybe", good, plus(on("doctor"), "--no-devices=maybe"), "--no-devices", "maybe");
        accepted("--timeout 500ms", good, plus(on("discover"), "--timeout", "500ms"), "discover runs with it",
                r -> r.out().contains("gpu"));
    }

    private void configRows() {
        for (String command : new String[] {"doctor", "discover"}) {
            List<String> run = on(command);
            clear(command + ": driver-factory.class missing", good("external-resource.gpu.driver-factory.class", ""),
                    run, "external-resource.gpu.driver-factory.class");
            clear(command + ": driver-factory.class names no plugin's factory",
                    good("external-resource.gpu.driver-factory.class", "com.example.NoSuchFactory"), run,
                    "external-resource.gpu.driver-factory.class", "com.example.NoSuchFactory");
            clear(command + ": amount missing", good("external-resource.gpu.amount", ""), run,
                    "external-resource.gpu.amount");
            clear(command + ": amount 0", good("external-resource.gpu.amount", "0"), run,
                    "external-resource.gpu.amount");
            clear(command + ": amount -2", good("external-resource.gpu.amount", "-2"), run,
                    "external-resource.gpu.amount");
            clear(command + ": amount abc", good("external-resource.gpu.amount", "abc"), run,
                    "external-resource.gpu.amount", "abc");
            clear(command + ": amount 1.5", good("external-resource.gpu.amount", "1.5"), run,
                    "external-resource.gpu.amount", "1.5");
            clear(command + ": amount 2^64 (no long)", good("external-resource.gpu.amount", "18446744073709551616"),
                    run, "external-resource.gpu.amount");
            clear(command + ": driver param count abc", good("external-resource.gpu.param.count", "abc"), run,
                    "external-resource.gpu.param.count", "abc");
            clear(command + ": driver param count -1", good("external-resource.gpu.param.count", "-1"), run,
                    "external-resource.gpu.param.count");
            clear(command + ": driver fails on the host", good("external-resource.gpu.param.fail-with", "no driver loaded"),
                    run, "gpu", "no driver loaded");
        }
        List<String> doctor = on("doctor");
        clear("doctor: amount 5 on a host of 4", good("external-resource.gpu.amount", "5"), doctor,
                "external-resource.gpu.amount", "lower it to 4");
        clear("doctor: amount 99999999999 on a host of 4", good("external-resource.gpu.amount", "99999999999"), doctor,
                "external-resource.gpu.amount", "99999999999 is more than the 4 devices", "lower it to 4");
        clear("doctor: amount 2^63-1 on a host of 4", good("external-resource.gpu.amount", Long.toString(Long.MAX_VALUE)),
                doctor, "external-resource.gpu.amount", "lower it to 4");
        clear("doctor: external-resources gpu;;rdma", good("external-resources", "gpu;;rdma",
                        "external-resource.rdma.driver-factory.class", SIM, "external-resource.rdma.amount", "1"),
                doctor, "external-resources", "an empty entry", "remove the empty entry: external-resources: gpu;rdma");
        clear("doctor: external-resources ';'", good("external-resources", ";"), doctor, "external-resource.gpu.amount",
                "external-resources ';' lists no resource", "add it: external-resources: gpu");
        clear("doctor: external-resouces (misspelt key)", lines("external-resouces: gpu",
                        "external-resource.gpu.driver-factory.class: " + SIM, "external-resource.gpu.amount: 2"),
                doctor, "external-resouces", "did you mean external-resources");
        clear("doctor: ammount (misspelt suffix)", good("external-resource.gpu.ammount", "2"), doctor,
                "external-resource.gpu.ammount", "external-resource.gpu.amount");
        clear("doctor: params.count (misspelt param)", good("external-resource.gpu.params.count", "2"), doctor,
                "external-resource.gpu.params.count", "external-resource.gpu.param.count");
        clear("doctor: unknown driver param", good("external-resource.gpu.param.cuont", "2"), doctor,
                "external-resource.gpu.param.cuont");
        clear("doctor: keys of a resource that is not listed", good("external-resource.gpus.amount", "2"), doctor,
                "external-resource.gpus.amount", "not listed");
        clear("doctor: external-resources none with gpu keys", good("external-resources", "none"), doctor,
                "external-resource.gpu", "not listed");
        clear("doctor: factory class misspelt in case",
                good("external-resource.gpu.driver-factory.class", SIM.toLowerCase(java.util.Locale.ROOT)), doctor,
                "external-resource.gpu.driver-factory.class", "did you mean " + SIM);
        clear("doctor: factory class with a trailing space",
                lines("external-resources: gpu", "external-resource.gpu.driver-factory.class: '" + SIM + " '",
                        "external-resource.gpu.amount: 2"),
                doctor, "external-resource.gpu.driver-factory.class", "the name has a trailing space");
        clear("doctor: kubernetes.config-key with a space",
                good("external-resource.gpu.kubernetes.config-key", "'nvidia.com/gpu x'"), doctor,
                "external-resource.gpu.kubernetes.config-key");
        clear("doctor: yarn.config-key with a space", good("external-resource.gpu.yarn.config-key", "'yarn.io/gpu x'"),
                doctor, "external-resource.gpu.yarn.config-key");
        clear("doctor: two resources on one Yarn type", good("external-resources", "gpu;spare",
                        "external-resource.gpu.yarn.config-key", "yarn.io/gpu",
                        "external-resource.spare.driver-factory.class", SIM, "external-resource.spare.amount", "1",
                        "external-resource.spare.yarn.config-key", "yarn.io/gpu"),
                doctor, "external-resource.gpu.yarn.config-key", "yarn.io/gpu");
        clear("doctor: more slots than devices", good("taskmanager.numberOfTaskSlots", "4"), doctor,
                "taskmanager.numberOfTaskSlots", "external-resource.gpu.amount");
        accepted("doctor: the good configuration", good(), doctor, "no finding", r -> r.out().contains("gpu"));
        accepted("discover: external-resources none", lines("external-resources: none"), on("discover"),
                "nothing configured", r -> true);
        accepted("discover: external-resources gpu;;rdma (Flink ignores the empty entry)",
                good("external-resources", "gpu;;rdma", "external-resource.rdma.driver-factory.class", SIM,
                        "external-resource.rdma.amount", "1"),
                on("discover"), "gpu and rdma, no resource ''",
                r -> r.out().contains("rdma") && !r.out().contains("''"));
    }

    private void renderRows() {
        Setup good = good();
        String[][] outputs = {
            {"--pod-template", "kubernetes"},
            {"--output", "flink-operator"},
            {"--resource-types", "yarn"},
            {"--node-resources", "yarn"},
            {"--capacity-scheduler", "yarn"}
        };
        for (String[] o : outputs) {
            String option = o[0];
            List<String> base = o[1].equals("flink-operator") ? operator() : on("render", o[1]);
            clear("render " + o[1] + " " + option + " ''", good, plus(base, option, ""),
                    option + ": empty path; expected a FILE to write");
            clear("render " + o[1] + " " + option + " a folder", good, plus(base, option, "{home}"),
                    option + " {home}: is a folder; expected a FILE to write");
            clear("render " + o[1] + " " + option + " below a file", good, plus(base, option, "{conf}/config.yaml/x"),
                    option + " {conf}/config.yaml/x: cannot write it: Not a directory");
            if (Files.exists(Path.of("/dev/full"))) {
                clear("render " + o[1] + " " + option + " /dev/full", good, plus(base, option, "/dev/full"),
                        option + " /dev/full: cannot write it: No space left on device");
            } else {
                skip("render " + o[1] + " " + option + " /dev/full", "no /dev/full on this host");
            }
        }
        String[][] pairs = {
            {"--resource-types", "--node-resources"},
            {"--resource-types", "--capacity-scheduler"},
            {"--node-resources", "--capacity-scheduler"}
        };
        for (String[] p : pairs) {
            clear("render yarn " + p[0] + " and " + p[1] + " on one path", good,
                    plus(on("render", "yarn"), p[0], "{home}/same.xml", p[1], "{home}/./same.xml"),
                    p[0] + " and " + p[1] + " both name {home}/same.xml");
        }
        accepted("render yarn with three files in a folder that does not exist yet", good,
                plus(on("render", "yarn"), "--resource-types", "{home}/h/rt.xml", "--node-resources", "{home}/h/nr.xml",
                        "--capacity-scheduler", "{home}/h/cs.xml"),
                "all three written", r -> r.out().contains("capacity-scheduler.xml written to"));

        clear("--flink-version v9_99", good, operator("--flink-version", "v9_99"),
                "--flink-version: v9_99 is not a FlinkVersion of the operator's CRD", "v2_2");
        clear("--flink-version 2.3 (no operator knows it)", good, operator("--flink-version", "2.3"),
                "--flink-version: v2_3 is not a FlinkVersion of the operator's CRD");
        clear("--flink-version latest", good, operator("--flink-version", "latest"), "--flink-version", "'latest'");
        clear("--flink-version ''", good, operator("--flink-version", ""), "--flink-version");
        clear("--image 'flink: 2.0'", good, operator("--image", "flink: 2.0"),
                "--image: 'flink: 2.0' is not an image reference");
        clear("--image with a newline", good, operator("--image", "flink:2.0\nkind: Secret"),
                "--image: 'flink:2.0\\nkind: Secret' is not an image reference");
        clear("--image Flink:2.0 (upper case)", good, operator("--image", "Flink:2.0"), "--image", "lower-case");
        clear("--image ''", good, operator("--image", ""), "--image: empty");
        clear("--image without a name (:2.0)", good, operator("--image", ":2.0"), "--image", "not an image reference");
        clear("--service-account 'a b'", good, operator("--service-account", "a b"),
                "--service-account: 'a b' is not a service account name");
        clear("--service-account ''", good, operator("--service-account", ""), "--service-account");
        clear("--service-account Flink (upper case)", good, operator("--service-account", "Flink"),
                "--service-account: 'Flink'");
        clear("--name GPU_job", good, operator("--name", "GPU_job"), "--name: 'GPU_job'");
        clear("--name ''", good, operator("--name", ""), "--name");
        clear("render flink-operator without --image", good,
                plus(on("render", "flink-operator"), "--flink-version", "2.2"), "--image");
        clear("render flink-operator without --flink-version", good,
                plus(on("render", "flink-operator"), "--image", "flink:2.2"), "--flink-version");
        clear("--dra-same-pcie-root ,,", good, plus(on("render", "kubernetes"), "--dra", "--dra-same-pcie-root", ",,"),
                "--dra-same-pcie-root ',,': an empty entry");
        clear("--dra-same-pcie-root gpu,", good, operator("--dra", "--dra-same-pcie-root", "gpu,"),
                "--dra-same-pcie-root 'gpu,': an empty entry");
        clear("--dra-same-pcie-root without --dra", good, plus(on("render", "kubernetes"), "--dra-same-pcie-root",
                "gpu,rdma"), "--dra-same-pcie-root needs --dra");
        clear("--dra-same-pcie-root naming an unknown resource", good,
                plus(on("render", "kubernetes"), "--dra", "--dra-same-pcie-root", "gpu,nope"),
                "--dra-same-pcie-root gpu,nope", "nope is not a resource of external-resources");
        clear("render kubernetes: amount abc", good("external-resource.gpu.amount", "abc"), on("render", "kubernetes"),
                "external-resource.gpu.amount");
        clear("render yarn: factory of no plugin", good("external-resource.gpu.driver-factory.class", "com.example.X"),
                on("render", "yarn"), "com.example.X");
        accepted("--flink-version 1.20", good, operator("--flink-version", "1.20"), "flinkVersion v1_20",
                r -> r.out().contains("flinkVersion: v1_20"));
        accepted("--flink-version ' v2_2 ' (spaces)", good, operator("--flink-version", " v2_2 "), "flinkVersion v2_2",
                r -> r.out().contains("flinkVersion: v2_2"));
        accepted("--image with registry port, path, tag and digest", good,
                operator("--image", "registry.example.com:5000/team/flink-devices:2.2@sha256:" + "0a".repeat(32)),
                "the image as given", r -> r.out().contains("registry.example.com:5000/team/flink-devices:2.2@sha256:"));
        accepted("--service-account flink.tm-1", good, operator("--service-account", "flink.tm-1"),
                "the account as given", r -> r.out().contains("serviceAccount: \"flink.tm-1\""));
        accepted("--pod-template in a folder that does not exist yet", good,
                plus(on("render", "kubernetes"), "--pod-template", "{home}/k8s/tm.yaml"), "the file written",
                r -> r.out().contains("kubernetes.pod-template-file.taskmanager"));
    }

    private static List<String> filled(List<String> args, Path home, Path conf, Path plugins) {
        List<String> out = new ArrayList<>();
        for (String a : args) {
            out.add(fill(a, home, conf, plugins));
        }
        return out;
    }

    private static String fill(String s, Path home, Path conf, Path plugins) {
        return s.replace("{conf}", conf.toString()).replace("{plugins}", plugins.toString()).replace("{home}", home.toString());
    }

    /** Null when the row is clear or accepted correctly, else what happened. */
    private String check(Row row, int i, Path plugins) throws Exception {
        Path rowHome = Files.createDirectories(home.resolve("row-" + i));
        Path conf = Files.createDirectories(rowHome.resolve("conf"));
        row.setup.into(conf);
        String[] args = filled(row.args, rowHome, conf, plugins).toArray(String[]::new);
        FutureTask<CliRun> task = new FutureTask<>(() -> CliRun.run(Map.of(), args));
        Thread thread = new Thread(task, "cli-bad-input " + row.input);
        thread.setDaemon(true);
        thread.start();
        CliRun run;
        try {
            run = task.get(BOUND_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            task.cancel(true);
            return "hang: no answer within " + BOUND_MS + " ms";
        } catch (ExecutionException e) {
            return "threw " + e.getCause();
        }
        String all = run.out() + run.err();
        if (STACK_FRAME.matcher(all).find()) {
            return "stack trace, exit " + run.exitCode() + ": " + all;
        }
        if (row.accepted != null) {
            if (run.exitCode() != 0) {
                return "refused an input that is fine (" + row.acceptedMeans + "), exit " + run.exitCode() + ": " + all;
            }
            return row.accepted.test(run) ? null : "silently wrong: exit 0 but not " + row.acceptedMeans + ": " + all;
        }
        if (run.exitCode() == 0) {
            return "silently wrong: exit 0: " + all;
        }
        List<String> missing = new ArrayList<>();
        for (String f : row.fragments) {
            String want = fill(f, rowHome, conf, plugins);
            if (!all.contains(want)) {
                missing.add(want);
            }
        }
        return missing.isEmpty() ? null : "vague: exit " + run.exitCode() + ", lacks " + missing + ": " + all;
    }

    @Test
    @DisplayName("every bad command line and configuration is answered clearly or accepted correctly: no hang, no stack"
            + " trace, nothing silently wrong")
    void badInputs() throws Exception {
        commandLineRows();
        configRows();
        renderRows();
        quarantineRows();
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        SimulatedDevices.installGpuPlugin(plugins);

        int clear = 0;
        int accepted = 0;
        List<String> other = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            String problem = check(row, i, plugins);
            if (problem != null) {
                other.add(row.input + ": " + problem);
            } else if (row.accepted != null) {
                accepted++;
            } else {
                clear++;
            }
        }
        long silent = other.stream().filter(o -> o.contains(": silently wrong")).count();
        long hangs = other.stream().filter(o -> o.contains(": hang")).count();
        String summary = "cli bad inputs: " + rows.size() + " tried, " + clear + " clear error, " + accepted
                + " accepted correctly, " + other.size() + " other (" + silent + " silently wrong, " + hangs
                + " hangs), " + skipped.size() + " skipped";
        System.out.println(summary);
        skipped.forEach(s -> System.out.println("  skipped " + s));
        other.forEach(o -> System.out.println("  other " + o));

        assertThat(other).as(summary).isEmpty();
    }
}
