package io.flinkdevices.testkit.cluster.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Waits until the JobManager's REST overview counts the expected number of TaskManagers. */
public final class RegisteredTaskManagers {

    private static final Pattern TASK_MANAGERS = Pattern.compile("\"taskmanagers\"\\s*:\\s*(\\d+)");

    private RegisteredTaskManagers() {}

    /**
     * Polls {@code http://host:restPort/overview} until it counts {@code expected} TaskManagers.
     *
     * @throws IllegalStateException when it does not within {@code timeout}, with the last count
     *     and the last REST answer
     */
    public static void await(String host, int restPort, int expected, Duration timeout) throws Exception {
        URL overview = new URL("http://" + host + ":" + restPort + "/overview");
        long deadline = System.nanoTime() + timeout.toNanos();
        int seen = -1;
        String lastError = null;
        while (System.nanoTime() < deadline) {
            HttpURLConnection connection = null;
            try {
                connection = (HttpURLConnection) overview.openConnection();
                connection.setConnectTimeout(5_000);
                connection.setReadTimeout(5_000);
                // no keep-alive: a cached connection would keep a JDK timer thread running
                connection.setRequestProperty("Connection", "close");
                int status = connection.getResponseCode();
                String body;
                try (InputStream in =
                        status == 200 ? connection.getInputStream() : connection.getErrorStream()) {
                    body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                Matcher m = TASK_MANAGERS.matcher(body);
                if (status == 200 && m.find()) {
                    seen = Integer.parseInt(m.group(1));
                    if (seen == expected) {
                        return;
                    }
                } else {
                    lastError = "HTTP " + status + ": " + body;
                }
            } catch (IOException e) {
                lastError = e.toString();
            } finally {
                if (connection != null) {
                    connection.disconnect();
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(
                "the JobManager on port "
                        + restPort
                        + " counts "
                        + seen
                        + " TaskManagers after "
                        + timeout.toSeconds()
                        + " s, expected "
                        + expected
                        + (lastError == null ? "" : "; last REST answer: " + lastError));
    }
}
