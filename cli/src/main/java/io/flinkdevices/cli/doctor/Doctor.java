package io.flinkdevices.cli.doctor;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.DriverDecorators;
import io.flinkdevices.cli.flink.DriverDecorators.DecoratorException;
import io.flinkdevices.cli.flink.DriverDecorators.KubernetesNeeds;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.ResourceSetting.AmountState;
import io.flinkdevices.cli.flink.TimedCall;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceNames;
import io.flinkdevices.sdk.internal.NearMiss;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;
import org.apache.flink.configuration.ExternalResourceOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.util.StringUtils;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks a Flink configuration against the plugins and this host, the way a TaskManager and Flink's
 * Kubernetes and Yarn resource managers would use it, and explains each problem with the key to
 * change and how.
 *
 * <p>It finds: keys Flink ignores (misspelt, or for a resource not listed in {@code
 * external-resources}); a resource without factory or amount; a non-numeric amount; a factory in no
 * plugin, or in two; a factory that rejects its params (unknown params with the nearest known one,
 * bad values); duplicate and invalid Kubernetes or Yarn resource names; config keys that disagree
 * with what the driver says its devices are requested as; and, unless switched off, an amount
 * larger than the driver can hand out on this host.
 */
public final class Doctor {

    private static final String PREFIX = "external-resource.";
    private static final String LIST_KEY = ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key();
    private static final String PARAM = "param";
    private static final String AMOUNT = "amount";
    private static final String FACTORY = "driver-factory.class";
    private static final List<String> RESOURCE_SUFFIXES =
            List.of(AMOUNT, FACTORY, Deployment.KUBERNETES.suffix(), Deployment.YARN.suffix());
    private static final Pattern DID_YOU_MEAN = Pattern.compile("did you mean ([^\\s?]+)\\?");

    /** Beyond this, probing for the largest amount a driver can hand out takes too many calls. */
    private static final int MAX_PROBES = 64;

    private final TimedCall calls;
    private final boolean checkDevices;
    private final Path libDir;

    /**
     * @param timeout how long one factory or driver call may take
     * @param checkDevices whether to ask drivers for devices on this host
     * @param libDir Flink's {@code lib/} folder, searched for factories put there by mistake;
     *     {@code null} to skip that
     */
    public Doctor(Duration timeout, boolean checkDevices, Path libDir) {
        this.calls = new TimedCall(timeout);
        this.checkDevices = checkDevices;
        this.libDir = libDir;
    }

    /** Every problem in {@code config}, with factories from {@code plugins}. */
    public List<Finding> run(Configuration config, PluginFactories plugins) {
        List<Finding> findings = new ArrayList<>();
        for (String problem : plugins.problems()) {
            findings.add(
                    Finding.error(
                            null,
                            plugins.pluginsDir().toString(),
                            problem,
                            "repair or remove that plugin folder: each folder under "
                                    + plugins.pluginsDir()
                                    + " needs its jars, and every class its service file names"));
        }
        List<ResourceSetting> settings = ResourceSetting.readAll(config);
        List<String> names = new ArrayList<>();
        settings.forEach(s -> names.add(s.name()));
        checkKeys(config, names, findings);

        Map<String, List<Finding>> duplicates = new HashMap<>();
        for (Deployment d : Deployment.values()) {
            duplicateConfigKeys(config, names, d, duplicates);
        }
        Set<String> reportedTwice = new HashSet<>();
        for (ResourceSetting setting : settings) {
            new ResourceCheck(setting, config, plugins, findings).run(reportedTwice);
            findings.addAll(duplicates.getOrDefault(setting.name(), List.of()));
        }
        return findings;
    }

    // ---------------------------------------------------------------------------------------
    // keys Flink ignores

    private static void checkKeys(Configuration config, List<String> listed, List<Finding> out) {
        Map<String, String> unlisted = new LinkedHashMap<>();
        for (String key : new TreeSet<>(config.keySet())) {
            if (key.equals(LIST_KEY)) {
                continue;
            }
            if (!key.startsWith(PREFIX)) {
                topLevelNearMiss(key, out);
                continue;
            }
            String rest = key.substring(PREFIX.length());
            String owner = null;
            for (String name : listed) {
                if (rest.startsWith(name + ".")
                        && (owner == null || name.length() > owner.length())) {
                    owner = name;
                }
            }
            if (owner == null) {
                int dot = rest.indexOf('.');
                unlisted.putIfAbsent(dot < 0 ? rest : rest.substring(0, dot), key);
                continue;
            }
            String suffix = rest.substring(owner.length() + 1);
            if (RESOURCE_SUFFIXES.contains(suffix) || suffix.startsWith(PARAM + ".")) {
                continue;
            }
            String resourcePrefix = PREFIX + owner + ".";
            Optional<String> meant = nearSuffix(suffix);
            out.add(
                    Finding.warning(
                            owner,
                            key,
                            "unknown key: under "
                                    + resourcePrefix
                                    + " Flink reads only "
                                    + String.join(", ", RESOURCE_SUFFIXES)
                                    + " and "
                                    + PARAM
                                    + ".*, and ignores this one"
                                    + meant.map(m -> "; did you mean " + resourcePrefix + m + "?")
                                            .orElse(""),
                            meant.map(m -> "rename it to " + resourcePrefix + m)
                                    .orElse(
                                            "remove it, or move it under "
                                                    + resourcePrefix
                                                    + PARAM
                                                    + ". if it is a driver parameter")));
        }
        String listedText =
                listed.isEmpty()
                        ? LIST_KEY + " is not set or is 'none'"
                        : LIST_KEY + " lists " + String.join(";", listed);
        unlisted.forEach(
                (name, firstKey) -> {
                    Optional<String> meant = NearMiss.closest(name, listed, 2);
                    String keys = PREFIX + name + ".*";
                    if (meant.isPresent()) {
                        out.add(
                                Finding.error(
                                        meant.get(),
                                        firstKey,
                                        "resource '"
                                                + name
                                                + "' is not listed ("
                                                + listedText
                                                + "), so Flink ignores "
                                                + keys
                                                + "; did you mean '"
                                                + meant.get()
                                                + "'?",
                                        "rename " + keys + " to " + PREFIX + meant.get() + ".*"));
                    } else {
                        out.add(
                                Finding.warning(
                                        null,
                                        firstKey,
                                        "resource '"
                                                + name
                                                + "' is configured but not listed ("
                                                + listedText
                                                + "), so Flink ignores "
                                                + keys,
                                        "add it: "
                                                + LIST_KEY
                                                + ": "
                                                + String.join(";", append(listed, name))
                                                + ", or remove "
                                                + keys));
                    }
                });
    }

    private static List<String> append(List<String> list, String item) {
        List<String> all = new ArrayList<>(list);
        all.add(item);
        return all;
    }

    private static void topLevelNearMiss(String key, List<Finding> out) {
        int dot = key.indexOf('.');
        String head = dot < 0 ? key : key.substring(0, dot);
        if (dot < 0 && NearMiss.distance(key, LIST_KEY) <= 2) {
            out.add(
                    Finding.error(
                            null,
                            key,
                            "unknown key, which Flink ignores; did you mean " + LIST_KEY + "?",
                            "rename it to " + LIST_KEY));
        } else if (dot > 0 && NearMiss.distance(head, "external-resource") <= 2) {
            String meant = PREFIX + key.substring(dot + 1);
            out.add(
                    Finding.error(
                            null,
                            key,
                            "unknown key, which Flink ignores; did you mean " + meant + "?",
                            "rename it to " + meant));
        }
    }

    /** {@code params.count} means {@code param.count}; {@code ammount} means {@code amount}. */
    private static Optional<String> nearSuffix(String suffix) {
        int dot = suffix.indexOf('.');
        if (dot > 0 && NearMiss.distance(suffix.substring(0, dot), PARAM) <= 2) {
            Optional<String> whole = NearMiss.closest(suffix, RESOURCE_SUFFIXES, 2);
            return whole.isPresent() ? whole : Optional.of(PARAM + suffix.substring(dot));
        }
        return NearMiss.closest(suffix, RESOURCE_SUFFIXES, 3);
    }

    // ---------------------------------------------------------------------------------------
    // two resources, one Kubernetes or Yarn resource name

    /**
     * Replays {@code ExternalResourceUtils.getExternalResourceConfigurationKeys}: resources in the
     * order of Flink's hash set, a later one with the same config key replacing the earlier.
     */
    private static void duplicateConfigKeys(
            Configuration config,
            List<String> listed,
            Deployment deployment,
            Map<String, List<Finding>> out) {
        Map<String, String> resourceByValue = new HashMap<>();
        Map<String, List<String>> resourcesByValue = new LinkedHashMap<>();
        for (String name : new HashSet<>(listed)) {
            String value = config.getString(deployment.configKey(name), null);
            if (StringUtils.isNullOrWhitespaceOnly(value)) {
                continue;
            }
            resourceByValue.put(value, name);
            resourcesByValue.computeIfAbsent(value, v -> new ArrayList<>()).add(name);
        }
        resourcesByValue.forEach(
                (value, names) -> {
                    if (names.size() < 2) {
                        return;
                    }
                    String kept = resourceByValue.get(value);
                    List<String> all = new ArrayList<>(listed);
                    all.retainAll(names);
                    for (String name : names) {
                        if (name.equals(kept)) {
                            continue;
                        }
                        out.computeIfAbsent(name, n -> new ArrayList<>())
                                .add(
                                        Finding.error(
                                                name,
                                                deployment.configKey(name),
                                                "names the same "
                                                        + deployment.label()
                                                        + " resource '"
                                                        + value
                                                        + "' as "
                                                        + deployment.configKey(kept)
                                                        + "; Flink keeps one config key per name"
                                                        + " (here resource '"
                                                        + kept
                                                        + "', an order that can change) and"
                                                        + " silently drops the other, so the "
                                                        + deployment.label()
                                                        + " request for '"
                                                        + name
                                                        + "' is lost",
                                                "give each resource its own "
                                                        + deployment.label()
                                                        + " resource name, or merge resources "
                                                        + String.join(" and ", all)
                                                        + " into one whose amount is the sum"));
                    }
                });
    }

    // ---------------------------------------------------------------------------------------
    // one resource

    /** The checks of one resource; findings go to the shared list in the resource's order. */
    private final class ResourceCheck {
        private final ResourceSetting setting;
        private final Configuration config;
        private final PluginFactories plugins;
        private final List<Finding> out;
        private final String name;

        ResourceCheck(
                ResourceSetting setting,
                Configuration config,
                PluginFactories plugins,
                List<Finding> out) {
            this.setting = setting;
            this.config = config;
            this.plugins = plugins;
            this.out = out;
            this.name = setting.name();
        }

        void run(Set<String> reportedTwice) {
            ExternalResourceDriver driver = null;
            if (setting.factoryClass().isEmpty()) {
                String found = String.join(", ", plugins.factoryClassNames());
                out.add(
                        Finding.error(
                                name,
                                setting.factoryKey(),
                                "not set, so Flink creates no driver for resource '"
                                        + name
                                        + "' (it only logs a WARN) and tasks get no devices",
                                "set it to the driver's factory class"
                                        + (found.isEmpty()
                                                ? ""
                                                : " (found in plugins: " + found + ")")));
            } else {
                driver = createDriver(setting.factoryClass().get(), reportedTwice);
            }
            checkAmount();
            for (Deployment d : Deployment.values()) {
                checkConfigKeyName(d);
            }
            if (driver == null || setting.amount().state() != AmountState.VALID) {
                return;
            }
            long amount = setting.amount().value().orElseThrow();
            checkKubernetesDecorator(driver, amount);
            checkYarnDecorator(driver, amount);
            if (checkDevices) {
                checkDevices(driver, amount);
            }
        }

        private void checkAmount() {
            ResourceSetting.Amount amount = setting.amount();
            switch (amount.state()) {
                case MISSING:
                    out.add(
                            Finding.error(
                                    name,
                                    setting.amountKey(),
                                    "not set, so Flink never asks the driver for devices (it only"
                                        + " logs a WARN), tasks get none, and Kubernetes or Yarn"
                                        + " request none",
                                    "set it to the number of devices each TaskManager gets, for"
                                            + " example "
                                            + setting.amountKey()
                                            + ": 1"));
                    break;
                case NOT_POSITIVE:
                    out.add(
                            Finding.error(
                                    name,
                                    setting.amountKey(),
                                    amount.value().orElseThrow()
                                            + " is not positive, so Flink never asks the driver for"
                                            + " devices and tasks get none",
                                    "set it to 1 or more, or remove '"
                                            + name
                                            + "' from "
                                            + LIST_KEY));
                    break;
                case NOT_A_NUMBER:
                    out.add(
                            Finding.error(
                                    name,
                                    setting.amountKey(),
                                    "'"
                                            + amount.raw().orElse("")
                                            + "' is not a whole number; Flink fails the TaskManager"
                                            + " (and the resource manager) on it",
                                    "write a whole number of devices, for example "
                                            + setting.amountKey()
                                            + ": 1"));
                    break;
                case VALID:
                    checkSlots(amount.value().orElseThrow());
                    break;
                default:
                    break;
            }
        }

        /** One device per slot: more slots than devices put two subtasks of a TaskManager on one device. */
        private void checkSlots(long amount) {
            int slots = config.get(TaskManagerOptions.NUM_TASK_SLOTS);
            if (slots > amount) {
                out.add(
                        Finding.warning(
                                name,
                                TaskManagerOptions.NUM_TASK_SLOTS.key(),
                                slots
                                        + " slots but "
                                        + setting.amountKey()
                                        + " is "
                                        + amount
                                        + ": a TaskManager runs up to "
                                        + slots
                                        + " subtasks on "
                                        + amount
                                        + " devices, and DeviceSelection.forSubtask gives some of"
                                        + " them the same device",
                                "set "
                                        + TaskManagerOptions.NUM_TASK_SLOTS.key()
                                        + " to "
                                        + amount
                                        + ", or "
                                        + setting.amountKey()
                                        + " to "
                                        + slots
                                        + " (unless the subtasks are meant to share devices)"));
            }
        }

        private ExternalResourceDriver createDriver(String className, Set<String> reportedTwice) {
            Optional<ExternalResourceDriverFactory> factory = plugins.find(className);
            if (factory.isEmpty()) {
                out.add(
                        Finding.error(
                                name,
                                setting.factoryKey(),
                                plugins.describeMissing(className)
                                        + "; Flink drops the resource with a WARN",
                                missingFactoryFix(className)));
                return null;
            }
            List<String> holders = plugins.pluginsWith(className);
            if (holders.size() > 1 && reportedTwice.add(className)) {
                String used = holders.get(holders.size() - 1);
                out.add(
                        Finding.warning(
                                name,
                                setting.factoryKey(),
                                "factory "
                                        + className
                                        + " is in "
                                        + holders.size()
                                        + " plugins ("
                                        + String.join(", ", holders)
                                        + " under "
                                        + plugins.pluginsDir()
                                        + "); Flink uses the one it loads last (here "
                                        + used
                                        + "), which follows the folder listing order and can"
                                        + " differ between hosts and versions",
                                "keep "
                                        + className
                                        + " in one plugin folder only: remove the others ("
                                        + String.join(", ", holders.subList(0, holders.size() - 1))
                                        + ")"));
            }
            // coordination off: doctor neither takes devices from nor writes the live file
            Configuration params = ReadOnlyCoordination.params(config, setting.paramPrefix());
            try {
                ExternalResourceDriver driver =
                        calls.call(
                                "doctor-" + name + "-factory",
                                () -> factory.get().createExternalResourceDriver(params));
                if (driver == null) {
                    out.add(
                            Finding.error(
                                    name,
                                    setting.factoryKey(),
                                    "factory " + className + " returned no driver (null)",
                                    "report it to the driver's author"));
                }
                return driver;
            } catch (java.util.concurrent.TimeoutException e) {
                out.add(
                        Finding.error(
                                name,
                                setting.factoryKey(),
                                "factory "
                                        + className
                                        + " did not return a driver within "
                                        + calls.describeTimeout()
                                        + " (--timeout); a TaskManager would wait for it forever",
                                "find out what the factory waits for (a device tool, a lock, the"
                                        + " network) on this host"));
            } catch (Throwable e) { // NOPMD: a driver's Error must not hide the other resources
                factoryFailed(className, e);
            }
            return null;
        }

        private String missingFactoryFix(String className) {
            Optional<String> near =
                    NearMiss.closest(className.strip(), plugins.factoryClassNames(), 3);
            if (near.isPresent()) {
                return "set it to " + near.get();
            }
            Optional<Path> inLib = jarInLib(className.strip());
            if (inLib.isPresent()) {
                return "move "
                        + inLib.get()
                        + " out of lib/ into its own folder under "
                        + plugins.pluginsDir()
                        + ": Flink loads external resource factories only from plugin folders";
            }
            return "copy the driver's plugin jar into its own folder under "
                    + plugins.pluginsDir()
                    + " on every TaskManager host, or correct the class name";
        }

        private void factoryFailed(String className, Throwable e) {
            String consequence =
                    e instanceof Exception
                            ? "; Flink logs a WARN and drops resource '"
                                    + name
                                    + "', so tasks get no devices"
                            : "; this is an Error, which Flink does not catch: the TaskManager"
                                    + " fails to start";
            List<String> problems = configProblems(e);
            if (problems.isEmpty()) {
                out.add(
                        Finding.error(
                                name,
                                setting.paramPrefix() + "*",
                                "factory "
                                        + className
                                        + " cannot create a driver: "
                                        + TimedCall.describeFailure(e)
                                        + consequence,
                                "fix what the message names; if it names no key, the driver's"
                                        + " author should make it do so"));
                return;
            }
            for (String problem : problems) {
                String key = setting.paramPrefix() + "*";
                String text = problem;
                int colon = problem.indexOf(": ");
                if (problem.startsWith(PREFIX) && colon > 0) {
                    key = problem.substring(0, colon);
                    text = problem.substring(colon + 2);
                }
                Matcher meant = DID_YOU_MEAN.matcher(text);
                String fix;
                if (meant.find()) {
                    fix = "rename it to " + meant.group(1);
                } else if (text.startsWith("unknown parameter")) {
                    fix = "remove it; the driver reads no such parameter";
                } else {
                    fix = "change " + key + " as the problem says";
                }
                out.add(
                        Finding.error(
                                name,
                                key,
                                text + " (factory " + className + " rejects it" + consequence + ")",
                                fix));
            }
        }

        private void checkConfigKeyName(Deployment d) {
            String key = d.configKey(name);
            String value = config.getString(key, null);
            if (StringUtils.isNullOrWhitespaceOnly(value)) {
                return;
            }
            List<String> problems =
                    d == Deployment.KUBERNETES
                            ? KubernetesResourceNames.validateExtendedResource(value)
                            : YarnResourceNames.validate(value);
            if (problems.isEmpty()) {
                return;
            }
            out.add(
                    Finding.error(
                            name,
                            key,
                            String.join("; ", problems)
                                    + (d == Deployment.KUBERNETES
                                            ? "; the Kubernetes API server rejects the"
                                                    + " TaskManager pods"
                                            : "; Flink's Yarn resource manager fails, as the"
                                                    + " cluster knows no such resource type"),
                            d == Deployment.KUBERNETES
                                    ? "use the extended resource name the device plugin"
                                            + " advertises, such as nvidia.com/gpu"
                                    : "use a resource type defined in the cluster's"
                                            + " resource-types.xml, such as yarn.io/gpu"));
        }

        private void checkKubernetesDecorator(ExternalResourceDriver driver, long amount) {
            final Optional<KubernetesNeeds> needs;
            try {
                needs = DriverDecorators.kubernetes(driver, amount);
            } catch (DecoratorException e) {
                decoratorFailed(e);
                return;
            }
            if (needs.isEmpty()) {
                return;
            }
            List<String> invalid = new ArrayList<>();
            needs.get()
                    .resources()
                    .forEach(
                            (resource, quantity) -> {
                                invalid.addAll(
                                        KubernetesResourceNames.validateExtendedResource(resource));
                                invalid.addAll(
                                        KubernetesResourceNames.validateQuantity(
                                                resource, quantity));
                            });
            checkDecoratorAgainstKey(
                    Deployment.KUBERNETES, needs.get().resources(), invalid, amount);
        }

        private void checkYarnDecorator(ExternalResourceDriver driver, long amount) {
            final Optional<Map<String, Long>> needs;
            try {
                needs = DriverDecorators.yarn(driver, amount);
            } catch (DecoratorException e) {
                decoratorFailed(e);
                return;
            }
            if (needs.isEmpty()) {
                return;
            }
            List<String> invalid = new ArrayList<>();
            needs.get()
                    .forEach(
                            (resource, quantity) -> {
                                invalid.addAll(YarnResourceNames.validate(resource));
                                invalid.addAll(
                                        YarnResourceNames.validateAmount(resource, quantity));
                            });
            checkDecoratorAgainstKey(Deployment.YARN, needs.get(), invalid, amount);
        }

        private void checkDecoratorAgainstKey(
                Deployment d, Map<String, Long> needs, List<String> invalid, long amount) {
            String key = d.configKey(name);
            if (!invalid.isEmpty()) {
                out.add(
                        Finding.error(
                                name,
                                setting.factoryKey(),
                                "the driver's "
                                        + d.label()
                                        + " decorator returns invalid requests: "
                                        + String.join("; ", invalid),
                                "report it to the driver's author; meanwhile set "
                                        + key
                                        + " by hand"));
                return;
            }
            String value = config.getString(key, null);
            if (StringUtils.isNullOrWhitespaceOnly(value) || needs.isEmpty()) {
                return;
            }
            boolean valueValid =
                    d == Deployment.KUBERNETES
                            ? KubernetesResourceNames.validateExtendedResource(value).isEmpty()
                            : YarnResourceNames.validate(value).isEmpty();
            if (!valueValid) {
                // already reported by checkConfigKeyName
                return;
            }
            Long quantity = needs.get(value);
            if (quantity == null) {
                out.add(
                        Finding.warning(
                                name,
                                key,
                                "Flink requests '"
                                        + value
                                        + "' for each TaskManager, but the driver says its devices"
                                        + " are requested as "
                                        + describe(needs)
                                        + ", so the TaskManager gets other devices than"
                                        + " the driver hands to tasks, or none fit and it is"
                                        + " never scheduled",
                                "set it to "
                                        + needs.keySet().iterator().next()
                                        + " (flink-devices render "
                                        + d.name().toLowerCase(java.util.Locale.ROOT)
                                        + " prints every line)"));
            } else if (quantity != amount) {
                out.add(
                        Finding.warning(
                                name,
                                key,
                                "Flink requests "
                                        + amount
                                        + " of '"
                                        + value
                                        + "' ("
                                        + setting.amountKey()
                                        + "), but the driver needs "
                                        + quantity
                                        + " of it for "
                                        + amount
                                        + " devices",
                                "remove "
                                        + key
                                        + " and request '"
                                        + value
                                        + "' with the rendered"
                                        + " pod template or container settings instead"));
            }
        }

        private void decoratorFailed(DecoratorException e) {
            out.add(
                    Finding.error(
                            name,
                            setting.factoryKey(),
                            e.getMessage(),
                            "report it to the driver's author; meanwhile set the config keys by"
                                    + " hand"));
        }

        // -----------------------------------------------------------------------------------
        // the devices on this host

        private void checkDevices(ExternalResourceDriver driver, long amount) {
            Attempt first = retrieve(driver, amount);
            if (first.count >= amount) {
                if (first.count > amount) {
                    out.add(
                            Finding.error(
                                    name,
                                    setting.amountKey(),
                                    "asked for "
                                            + amount
                                            + " devices, the driver returned "
                                            + first.count
                                            + ", and Flink hands tasks all of them",
                                    "report it to the driver's author"));
                }
                return;
            }
            if (first.timedOut) {
                out.add(
                        Finding.error(
                                name,
                                setting.amountKey(),
                                "the driver did not return devices within "
                                        + calls.describeTimeout()
                                        + " (--timeout); a TaskManager would wait for it forever",
                                "find out what the driver waits for on this host"));
                return;
            }
            long sees = first.failure == null ? first.count : largestAmount(driver, amount);
            String why = first.failure == null ? "" : " The driver says: " + first.failure;
            if (sees > 0) {
                out.add(
                        Finding.error(
                                name,
                                setting.amountKey(),
                                amount
                                        + " is more than the "
                                        + sees
                                        + (sees == 1 ? " device" : " devices")
                                        + " the driver can hand out on this host, so tasks get"
                                        + (first.failure == null
                                                ? " only " + sees
                                                : " none (Flink drops the resource with a WARN)")
                                        + "."
                                        + why,
                                "lower it to "
                                        + sees
                                        + ", or make the other devices visible to this host's"
                                        + " TaskManager"));
            } else {
                out.add(
                        Finding.error(
                                name,
                                PREFIX + name,
                                "the driver finds no usable device on this host, so tasks get"
                                        + " none (Flink drops the resource with a WARN)."
                                        + why,
                                "fix what the driver says, or run doctor on a TaskManager host"
                                        + " (--no-devices skips this check)"));
            }
        }

        /** The largest amount below {@code failed} the driver hands out, 0 if none. */
        private long largestAmount(ExternalResourceDriver driver, long failed) {
            // downwards, one call each: with coordination on, a success holds its devices until
            // the CLI exits, so a later, larger probe would count them as taken
            long lowest = Math.max(1, failed - MAX_PROBES);
            for (long k = failed - 1; k >= lowest; k--) {
                Attempt attempt = retrieve(driver, k);
                if (attempt.timedOut) {
                    return 0;
                }
                if (attempt.failure == null && attempt.count > 0) {
                    return Math.min(attempt.count, k);
                }
            }
            return 0;
        }

        private Attempt retrieve(ExternalResourceDriver driver, long amount) {
            try {
                Set<? extends ExternalResourceInfo> infos =
                        calls.call(
                                "doctor-" + name + "-driver",
                                () -> driver.retrieveResourceInfo(amount));
                return infos == null
                        ? new Attempt(0, "returned null instead of a set of devices", false)
                        : new Attempt(infos.size(), null, false);
            } catch (java.util.concurrent.TimeoutException e) {
                return new Attempt(0, null, true);
            } catch (Throwable e) { // NOPMD: a driver's Error must not hide the other resources
                return new Attempt(0, TimedCall.describeFailure(e), false);
            }
        }
    }

    private record Attempt(long count, String failure, boolean timedOut) {}

    private static String describe(Map<String, Long> needs) {
        List<String> parts = new ArrayList<>();
        needs.forEach((k, v) -> parts.add("'" + k + "': " + v));
        return String.join(", ", parts);
    }

    /**
     * The problems of an sdk-api {@code DriverConfigException} (or anything with a public {@code
     * List problems()}), from whatever class loader; else the {@code " - "} lines of a message in
     * that format; else empty.
     */
    static List<String> configProblems(Throwable e) {
        try {
            Method problems = e.getClass().getMethod("problems");
            Object value = problems.invoke(e);
            if (value instanceof List<?> list && !list.isEmpty()) {
                List<String> out = new ArrayList<>();
                for (Object item : list) {
                    out.add(String.valueOf(item));
                }
                return out;
            }
        } catch (ReflectiveOperationException | RuntimeException ignored) {
            // not a config exception; fall through to the message
        }
        String message = e.getMessage();
        if (message == null || !message.contains("\n  - ")) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String line : message.split("\n")) {
            if (line.startsWith("  - ")) {
                out.add(line.substring(4));
            }
        }
        return out;
    }

    /** A jar in Flink's {@code lib/} that holds {@code className}. */
    private Optional<Path> jarInLib(String className) {
        if (libDir == null || !Files.isDirectory(libDir)) {
            return Optional.empty();
        }
        String entry = className.replace('.', '/') + ".class";
        try (Stream<Path> jars = Files.list(libDir)) {
            for (Path jar :
                    (Iterable<Path>) jars.filter(p -> p.toString().endsWith(".jar"))::iterator) {
                try (JarFile file = new JarFile(jar.toFile())) {
                    if (file.getEntry(entry) != null) {
                        return Optional.of(jar);
                    }
                } catch (IOException e) {
                    // an unreadable jar is not the one we look for
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
