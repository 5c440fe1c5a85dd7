package io.flinkdevices.job;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads the per-device gauges of {@link DeviceMetrics} from the HTTP endpoints of Flink's
 * Prometheus reporter on a range of {@value #PORTS} local ports (the JobManager's and the
 * TaskManager's reporters take one each).
 */
final class PrometheusScrape {

    /** How many ports the reporters of a test cluster may take. */
    static final int PORTS = 10;

    private final int base;

    private PrometheusScrape(int base) {
        this.base = base;
    }

    /** A scrape of the first of {@value #PORTS} ports in a row that were free a moment ago. */
    static PrometheusScrape onFreePorts() throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int first;
            try (ServerSocket s = new ServerSocket(0)) {
                first = s.getLocalPort();
            }
            if (first + PORTS > 65535) {
                continue;
            }
            boolean free = true;
            for (int p = first; p < first + PORTS && free; p++) {
                try (ServerSocket s = new ServerSocket(p)) {
                    s.setReuseAddress(true);
                } catch (IOException e) {
                    free = false;
                }
            }
            if (free) {
                return new PrometheusScrape(first);
            }
        }
        throw new IOException("no " + PORTS + " free ports in a row");
    }

    /** The value of {@code metrics.reporter.prom.port}. */
    String portRange() {
        return base + "-" + (base + PORTS - 1);
    }

    /** Every reporter endpoint in the range, concatenated. */
    String scrape() {
        StringBuilder all = new StringBuilder();
        for (int p = base; p < base + PORTS; p++) {
            HttpURLConnection c = null;
            try {
                c = (HttpURLConnection) new URL("http://localhost:" + p + "/metrics").openConnection();
                c.setConnectTimeout(500);
                c.setReadTimeout(5000);
                c.setRequestProperty("Connection", "close");
                if (c.getResponseCode() == 200) {
                    try (InputStream in = c.getInputStream()) {
                        all.append(new String(in.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
                    }
                }
            } catch (IOException e) {
                // nothing listens on this port
            } finally {
                if (c != null) {
                    c.disconnect();
                }
            }
        }
        return all.toString();
    }

    /**
     * The value of device gauge {@code name} of {@code device} of {@code resource} in {@code
     * scraped}, or null while it is not exported. {@code device} as the reporter writes a label
     * value: letters, digits, ':' and '_' kept, the rest written as '_'.
     */
    static Double gauge(String scraped, String resource, String device, String name) {
        Pattern line = Pattern.compile("(?m)^flink_taskmanager_job_task_operator_resource_device_" + name
                + "\\{([^}]*)\\} (\\S+)$");
        Matcher m = line.matcher(scraped);
        while (m.find()) {
            if (m.group(1).contains("device=\"" + device + "\"") && m.group(1).contains("resource=\"" + resource + "\"")) {
                return Double.parseDouble(m.group(2));
            }
        }
        return null;
    }

    /** Scrapes until gauge {@code name} reads {@code expected} (60 s at most, for a loaded machine); returns that scrape. */
    String await(String resource, String device, String name, double expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline) {
            last = scrape();
            Double v = gauge(last, resource, device, name);
            if (v != null && v == expected) {
                return last;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("gauge " + name + " of " + resource + " " + device + " never read " + expected
                + "; last scrape's device lines:\n"
                + last.lines().filter(l -> l.contains("_device_")).reduce("", (a, b) -> a + b + "\n"));
    }

    /**
     * Scrapes until every gauge in {@code names} of {@code device} is exported (60 s at most); returns
     * that scrape. A subtask registers its gauges one after the other, so a scrape may come between.
     */
    String awaitAll(String resource, String device, String... names) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> missing = List.of(names);
        while (System.nanoTime() < deadline) {
            String last = scrape();
            missing = Arrays.stream(names).filter(n -> gauge(last, resource, device, n) == null).collect(Collectors.toList());
            if (missing.isEmpty()) {
                return last;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("gauges " + missing + " of " + resource + " " + device + " were never exported");
    }
}
