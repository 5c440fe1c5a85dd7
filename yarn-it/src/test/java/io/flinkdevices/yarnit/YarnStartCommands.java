package io.flinkdevices.yarnit;

import org.apache.flink.configuration.ConfigConstants;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The start commands of Flink's Yarn containers, composed as {@code flink-yarn} composes them
 * (not on this class path). A TaskManager's, as the Yarn resource manager's {@code
 * Utils.getTaskManagerShellCommand} builds it: the start-command template ({@value #TEMPLATE_KEY}, default {@code %java% %jvmmem% %jvmopts%
 * %logging% %class% %args% %redirects%}) filled with the JVM's memory flags, the TaskManager's JVM
 * options, the main class, and as arguments Flink's own {@code
 * TaskExecutorProcessUtils.generateDynamicConfigsStr} (which quotes the resource list, {@code -D
 * external-resources="fpga;gpu"}) followed by {@code --configDir}. Flink hands that one string to
 * Yarn as the container's command, unchanged. The JobManager's, as {@code YarnClusterDescriptor}
 * builds it, fills the same template (see {@link #jobManager}).
 */
final class YarnStartCommands {

    /** The key of the template, as Flink's {@code YarnConfigOptions} names it. */
    static final String TEMPLATE_KEY = "yarn.container-start-command-template";

    private static final ConfigOption<String> TEMPLATE =
            ConfigOptions.key(TEMPLATE_KEY)
                    .stringType()
                    .defaultValue(ConfigConstants.DEFAULT_YARN_CONTAINER_START_COMMAND_TEMPLATE);

    private YarnStartCommands() {}

    /**
     * The command that starts {@code mainClass} as the JobManager (the application master) of
     * {@code config}, as Flink's {@code YarnClusterDescriptor} composes it: the same template, the
     * JobManager's memory flags and JVM options, its logging flags ({@code -Dlog.file="..."},
     * quoted), and as arguments {@code JobManagerProcessUtils.generateDynamicConfigsStr}.
     */
    static String jobManager(Configuration config, Class<?> mainClass) {
        JobManagerProcessSpec spec = JobManagerProcessUtils.processSpecFromConfig(config);
        String jvmOpts = config.get(CoreOptions.FLINK_JVM_OPTIONS);
        if (!config.get(CoreOptions.FLINK_JM_JVM_OPTIONS).isEmpty()) {
            jvmOpts += " " + config.get(CoreOptions.FLINK_JM_JVM_OPTIONS);
        }
        Map<String, String> values = new LinkedHashMap<>();
        values.put("java", "$JAVA_HOME/bin/java");
        values.put("jvmmem", JobManagerProcessUtils.generateJvmParametersStr(spec, config));
        values.put("jvmopts", jvmOpts);
        values.put("logging", "-Dlog.file=\"<LOG_DIR>/jobmanager.log\"");
        values.put("class", mainClass.getName());
        values.put("args", JobManagerProcessUtils.generateDynamicConfigsStr(spec));
        values.put("redirects", "1> <LOG_DIR>/jobmanager.out 2> <LOG_DIR>/jobmanager.err");
        return fill(config.get(TEMPLATE), values);
    }

    /** The command that starts {@code mainClass} as the TaskManager of {@code config}. */
    static String taskManager(Configuration config, String configDir, Class<?> mainClass) {
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(config);
        String jvmOpts = config.get(CoreOptions.FLINK_JVM_OPTIONS);
        if (!config.get(CoreOptions.FLINK_TM_JVM_OPTIONS).isEmpty()) {
            jvmOpts += " " + config.get(CoreOptions.FLINK_TM_JVM_OPTIONS);
        }
        Map<String, String> values = new LinkedHashMap<>();
        values.put("java", "$JAVA_HOME/bin/java");
        values.put("jvmmem", ProcessMemoryUtils.generateJvmParametersStr(spec));
        values.put("jvmopts", jvmOpts + " -XX:+IgnoreUnrecognizedVMOptions");
        values.put("logging", "");
        values.put("class", mainClass.getName());
        values.put(
                "args",
                TaskExecutorProcessUtils.generateDynamicConfigsStr(spec) + " --configDir " + configDir);
        values.put("redirects", "1> <LOG_DIR>/taskmanager.out 2> <LOG_DIR>/taskmanager.err");
        return fill(config.get(TEMPLATE), values);
    }

    /** The template with its placeholders replaced, as Flink's {@code getStartCommand} does it. */
    private static String fill(String template, Map<String, String> values) {
        String command = template;
        for (Map.Entry<String, String> v : values.entrySet()) {
            command = command.replace("%" + v.getKey() + "%", v.getValue()).replace("  ", " ").trim();
        }
        return command;
    }
}
