package io.flinkdevices.testkit.fake;

import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Waits for a monitor's first sample on the infos a driver handed out. A driver's {@code
 * DeviceMonitor} takes that sample on its own thread after {@code retrieveResourceInfo} returned,
 * so a test that reads {@code health} or a {@code metric.*} key right after retrieval waits here
 * first:
 *
 * <pre>{@code
 * List<ExternalResourceInfo> gpus = FirstSample.await(driver.retrieveResourceInfo(2));
 * assertThat(gpus.get(0).getProperty("health")).contains("ok");
 * }</pre>
 *
 * <p>An info is sampled once it reads {@code health}; an info without {@code health.device} has no
 * monitor and is not waited for. Bounded: {@link #PATIENCE} (a loaded machine), then an {@link
 * IllegalStateException} naming the infos still without a sample.
 */
@PublicEvolving
public final class FirstSample {

    /** How long {@link #await(Collection)} waits at most. */
    public static final Duration PATIENCE = Duration.ofSeconds(30);

    private FirstSample() {}

    /** Whether every monitored info of {@code infos} reads {@code health}. */
    public static boolean arrived(Collection<? extends ExternalResourceInfo> infos) {
        return waiting(infos).isEmpty();
    }

    /**
     * Waits until every monitored info of {@code infos} reads {@code health}, at most {@link
     * #PATIENCE}; returns the infos as a list, in their order.
     *
     * @throws IllegalStateException naming the infos still without a sample after {@link #PATIENCE}
     */
    public static List<ExternalResourceInfo> await(Collection<? extends ExternalResourceInfo> infos) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!arrived(infos)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no first sample of the monitor within " + PATIENCE + " for " + waiting(infos));
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
        return new ArrayList<>(infos);
    }

    private static List<String> waiting(Collection<? extends ExternalResourceInfo> infos) {
        List<String> out = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            if (info.getProperty(LiveProperties.KEY_HEALTH_DEVICE).isPresent()
                    && info.getProperty(LiveProperties.KEY_HEALTH).isEmpty()) {
                out.add(info.getProperty(LiveProperties.KEY_HEALTH_DEVICE).get());
            }
        }
        return out;
    }
}
