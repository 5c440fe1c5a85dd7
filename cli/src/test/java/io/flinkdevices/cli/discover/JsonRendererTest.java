package io.flinkdevices.cli.discover;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

class JsonRendererTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static String render(DiscoveryReport report) {
        StringWriter text = new StringWriter();
        JsonRenderer.render(report, new PrintWriter(text));
        return text.toString();
    }

    @Test
    @DisplayName("writes one object whose resources carry all six fields in a fixed order")
    void shape() throws Exception {
        String json = render(Reports.of(List.of(), Reports.okGpu(), Reports.brokenFpga()));

        JsonNode root = JSON.readTree(json);
        assertThat(root.isObject()).isTrue();
        assertThat(root.properties()).extracting(e -> e.getKey()).containsExactly("resources");
        JsonNode gpu = root.get("resources").get(0);
        assertThat(gpu.properties())
                .extracting(e -> e.getKey())
                .containsExactly("name", "factory", "amount", "status", "error", "infos");
        assertThat(gpu.get("amount").isIntegralNumber()).isTrue();
        assertThat(gpu.get("amount").asLong()).isEqualTo(2);
        assertThat(gpu.get("status").asText()).isEqualTo("ok");
        assertThat(gpu.get("error").isNull()).isTrue();
        assertThat(gpu.get("infos").get(1).get("uuid").asText()).isEqualTo("GPU-1");
        assertThat(gpu.get("infos").get(1).properties())
                .extracting(e -> e.getKey())
                .containsExactly("kind", "index", "uuid");
    }

    @Test
    @DisplayName("writes nulls for what is absent and all problems in one error string")
    void errorResource() throws Exception {
        JsonNode fpga =
                JSON.readTree(render(Reports.of(List.of(), Reports.brokenFpga())))
                        .get("resources")
                        .get(0);

        assertThat(fpga.get("status").asText()).isEqualTo("error");
        assertThat(fpga.get("factory").isNull()).isTrue();
        assertThat(fpga.get("amount").isNull()).isTrue();
        assertThat(fpga.get("error").asText())
                .isEqualTo(
                        "external-resource.fpga.driver-factory.class: not set;"
                                + " external-resource.fpga.amount: 'two' is not a whole number");
        assertThat(fpga.get("infos").isArray()).isTrue();
        assertThat(fpga.get("infos")).isEmpty();
    }

    @Test
    @DisplayName("writes skipped in lower case, and nothing after the object but a newline")
    void skippedAndTrailer() throws Exception {
        ResourceReport skipped =
                new ResourceReport(
                        "gpu", "f", null, ResourceStatus.SKIPPED, List.of("no amount"), List.of());
        String json = render(Reports.of(List.of(), skipped));

        assertThat(JSON.readTree(json).get("resources").get(0).get("status").asText())
                .isEqualTo("skipped");
        assertThat(json).startsWith("{").endsWith("}" + System.lineSeparator());
    }
}
