package io.flinkdevices.samples.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The RDMA sample on a local device cluster with flink-devices' RDMA driver on a fake RoCE host
 * (this host has no RDMA NIC and no libdisni, so the subtasks look up over TCP and say why), against
 * the table server started as its own process through its main, as an operator starts it.
 */
class EnrichmentJobITCase {

    private static final int KEYS = 5_000;
    private static Process server;
    private static int port;

    @BeforeAll
    static void startServer() throws Exception {
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                TableServer.class.getName(),
                "--port", "0",
                "--keys", Integer.toString(KEYS),
                "--bind", "127.0.0.1");
        server = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        String first = out.readLine();
        Matcher m = Pattern.compile("table server listening on 127\\.0\\.0\\.1:(\\d+) \\(TCP\\), 5000 keys x 64 floats").matcher(String.valueOf(first));
        assertThat(m.matches()).as("the server's first line: %s", first).isTrue();
        port = Integer.parseInt(m.group(1));
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("the subtasks receive the RDMA port, look up over TCP with the reason, and every checked score is exact")
    void enrichesOverTcp() throws Exception {
        EnrichmentJob.Result r = EnrichmentLocal.run(
                EnrichmentJob.Options.server("127.0.0.1", port).keys(KEYS).events(20_000).batch(64).parallelism(2), 2, Map.of());
        System.out.println(r.summary());

        assertThat(r.subtasksTcp).isEqualTo(2);
        assertThat(r.subtasksRdma).isZero();
        assertThat(r.records).isEqualTo(20_000);
        assertThat(r.lookups).isBetween(20_000L / 64, 20_000L / 64 + 2);
        assertThat(r.checked).isPositive();
        assertThat(r.mismatches).isZero();
        assertThat(r.lookupShare()).isBetween(0.0, 1.0);
    }

    @Test
    @DisplayName("a subtask that fails is restarted from the last checkpoint, and the scores stay exact")
    void survivesAFailure() throws Exception {
        EnrichmentJob.Result r = EnrichmentLocal.run(
                EnrichmentJob.Options.server("127.0.0.1", port)
                        .keys(KEYS)
                        .events(60_000)
                        .batch(64)
                        .parallelism(2)
                        .checkpointMs(50)
                        .failOnceAt(20_000),
                2,
                Map.of("restart-strategy.type", "fixed-delay",
                        "restart-strategy.fixed-delay.attempts", "3",
                        "restart-strategy.fixed-delay.delay", "10 ms"));
        System.out.println(r.summary());

        assertThat(r.restartedSubtasks).as("subtasks opened again after the failure").isPositive();
        assertThat(r.checked).isPositive();
        assertThat(r.mismatches).isZero();
    }

    @Test
    @DisplayName("with no table server at the address, the job fails naming it and the OS reason, without hanging")
    void unreachableServer() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        int nobody = closed;
        long start = System.nanoTime();
        assertThatThrownBy(() -> EnrichmentLocal.run(
                        EnrichmentJob.Options.server("127.0.0.1", nobody).keys(KEYS).events(1_000).batch(16).parallelism(1).timeoutMs(1_000),
                        1,
                        Map.of()))
                .hasStackTraceContaining("table server 127.0.0.1:" + nobody + " is unreachable (");
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(60);
    }
}
