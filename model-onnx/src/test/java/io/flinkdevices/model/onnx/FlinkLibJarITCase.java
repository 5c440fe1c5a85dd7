package io.flinkdevices.model.onnx;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The jar an operator puts into Flink's lib/: what it holds and what it leaves to Flink. */
class FlinkLibJarITCase {

    @Test
    @DisplayName("the lib/ jar registers the provider, holds job-devices, sdk-api and ONNX Runtime's Linux natives, and no Flink")
    void contents() throws Exception {
        String p = System.getProperty("flink-lib.jar");
        assertThat(p).as("system property flink-lib.jar (set by the build)").isNotNull();
        try (JarFile jar = new JarFile(Path.of(p).toFile())) {
            List<String> names = jar.stream().map(e -> e.getName()).collect(Collectors.toList());
            String services;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(
                    jar.getInputStream(jar.getEntry("META-INF/services/org.apache.flink.table.factories.Factory")),
                    StandardCharsets.UTF_8))) {
                services = r.lines().collect(Collectors.joining("\n"));
            }
            assertThat(services.trim()).isEqualTo("io.flinkdevices.model.onnx.OnnxModelProviderFactory");
            assertThat(names).contains("io/flinkdevices/job/DeviceLeases.class", "io/flinkdevices/sdk/info/GpuInfo.class",
                    "ai/onnxruntime/OrtSession.class", "ai/onnxruntime/native/linux-x64/libonnxruntime.so");
            assertThat(names).noneMatch(n -> n.startsWith("org/apache/flink/") || n.startsWith("org/slf4j/")
                    || n.startsWith("ai/onnxruntime/native/osx-") || n.startsWith("ai/onnxruntime/native/win-"));
        }
    }
}
