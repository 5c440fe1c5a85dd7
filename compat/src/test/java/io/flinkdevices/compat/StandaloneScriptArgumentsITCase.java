package io.flinkdevices.compat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalResourceOptions;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a TaskManager started by this release's {@code bin/taskmanager.sh} reads as its resource
 * list: the release's {@code BashJavaUtils GET_TM_RESOURCE_PARAMS} in a JVM of its own (as the
 * script runs it), its last result line split as the script's unquoted expansion splits it (at
 * blanks, no quote removed), the script's own arguments after it, and the release's {@code
 * TaskManagerRunner.loadConfiguration} on the result.
 */
@DisplayName("Several resources through Flink's standalone start scripts")
class StandaloneScriptArgumentsITCase {

    private static final String VERSION = System.getProperty("compat.flink.version", "?");
    private static final String RESULT = "BASH_JAVA_UTILS_EXEC_RESULT:";

    @TempDir Path conf;

    @Test
    @DisplayName("two resources reach the TaskManager as one named 'fpga;gpu'; the list repeated as the script's last argument gives both")
    void twoResources() throws Exception {
        writeConfig("gpu;fpga");

        List<String> computed = dynamicProperties(List.of());
        assertThat(computed)
                .as("Flink %s's computed dynamic properties, as the TaskManager receives them", VERSION)
                .contains("external-resources=\"fpga;gpu\"");
        assertThat(taskManagerList(computed, List.of()))
                .as("Flink %s: the TaskManager's list after bin/taskmanager.sh start", VERSION)
                .containsExactly("fpga;gpu");

        List<String> repeated = List.of("-Dexternal-resources=gpu;fpga");
        assertThat(taskManagerList(dynamicProperties(repeated), repeated))
                .as("Flink %s: after bin/taskmanager.sh start '-Dexternal-resources=gpu;fpga'", VERSION)
                .containsExactly("gpu", "fpga");
    }

    @Test
    @DisplayName("one resource passes through intact")
    void oneResource() throws Exception {
        writeConfig("gpu");

        assertThat(taskManagerList(dynamicProperties(List.of()), List.of()))
                .as("Flink %s: one resource after bin/taskmanager.sh start", VERSION)
                .containsExactly("gpu");
    }

    private void writeConfig(String list) throws Exception {
        StringBuilder yaml = new StringBuilder("taskmanager.memory.process.size: 1g\n")
                .append("external-resources: ").append(list).append('\n');
        for (String name : list.split(";")) {
            yaml.append("external-resource.").append(name).append(".amount: 1\n");
            yaml.append("external-resource.").append(name).append(".driver-factory.class: com.example.Factory\n");
        }
        Files.writeString(conf.resolve("config.yaml"), yaml.toString());
    }

    /** The words of BashJavaUtils' last result line, as an unquoted shell expansion gives them. */
    private List<String> dynamicProperties(List<String> scriptArgs) throws Exception {
        String classPath =
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath,
                "org.apache.flink.runtime.util.bash.BashJavaUtils", "GET_TM_RESOURCE_PARAMS",
                "--configDir", conf.toString()));
        command.addAll(scriptArgs);
        Path out = conf.resolve("bash-java-utils.out");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("BashJavaUtils ended").isTrue();
        } finally {
            process.destroyForcibly();
        }
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("BashJavaUtils' exit status\n%s", lines).isZero();
        List<String> results = lines.stream()
                .filter(l -> l.startsWith(RESULT))
                .map(l -> l.substring(RESULT.length()))
                .collect(Collectors.toList());
        assertThat(results).as("BashJavaUtils' result lines (JVM parameters, dynamic properties)").hasSize(2);
        return Arrays.stream(results.get(1).split("[ \t\n]+")).filter(w -> !w.isEmpty()).collect(Collectors.toList());
    }

    private List<String> taskManagerList(List<String> computed, List<String> scriptArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of("--configDir", conf.toString()));
        args.addAll(computed);
        args.addAll(scriptArgs);
        Configuration config = TaskManagerRunner.loadConfiguration(args.toArray(new String[0]));
        return config.get(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST);
    }
}
