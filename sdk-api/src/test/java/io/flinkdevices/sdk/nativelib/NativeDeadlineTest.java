package io.flinkdevices.sdk.nativelib;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("A native deadline")
class NativeDeadlineTest {

    private static final String LIBRARY = "libvendor.so.1 (a vendor's library)";
    private static final String HINT = "install the vendor's driver";
    private static final String KEY = "external-resource.acc.param.timeout";

    @Test
    @DisplayName("returns what the call returned, and runs it on a daemon thread without a context class loader")
    void returnsTheValue() throws Exception {
        AtomicReference<Thread> ran = new AtomicReference<>();
        AtomicReference<ClassLoader> loader = new AtomicReference<>(getClass().getClassLoader());
        String value = new NativeDeadline(LIBRARY, HINT).call("discovery", Duration.ofSeconds(10), KEY, () -> {
            ran.set(Thread.currentThread());
            loader.set(Thread.currentThread().getContextClassLoader());
            return "4 devices";
        });
        assertThat(value).isEqualTo("4 devices");
        assertThat(ran.get()).isNotSameAs(Thread.currentThread());
        assertThat(ran.get().isDaemon()).isTrue();
        assertThat(loader.get()).as("a call left running keeps no class loader alive").isNull();
    }

    @Test
    @DisplayName("gives the call's DeviceDriverException as it is, and a LinkageError as one naming the library")
    void failures() {
        NativeDeadline deadline = new NativeDeadline(LIBRARY, HINT);
        assertThatThrownBy(() -> deadline.call("discovery", Duration.ofSeconds(10), KEY, () -> {
            throw new DeviceDriverException("vendorGetCount returned 9 (driver not loaded)");
        })).isInstanceOf(DeviceDriverException.class).hasMessage("vendorGetCount returned 9 (driver not loaded)");
        assertThatThrownBy(() -> deadline.call("discovery", Duration.ofSeconds(10), KEY, () -> {
            throw new UnsatisfiedLinkError("libvendor.so.1: cannot open shared object file: No such file or directory");
        })).isInstanceOf(DeviceDriverException.class)
                .hasMessage("native library " + LIBRARY + " could not be loaded (UnsatisfiedLinkError: libvendor.so.1: cannot"
                        + " open shared object file: No such file or directory); " + HINT);
        assertThat(deadline.blocked()).as("a call that failed has returned").isFalse();
    }

    @Test
    @DisplayName("calls under way do not stop one another: two drivers may call at once")
    void concurrentCalls() throws Exception {
        NativeDeadline deadline = new NativeDeadline(LIBRARY, HINT);
        CountDownLatch bothIn = new CountDownLatch(2);
        AtomicReference<Object> other = new AtomicReference<>();
        Thread second = new Thread(() -> {
            try {
                other.set(deadline.call("discovery", Duration.ofSeconds(30), KEY, () -> {
                    bothIn.countDown();
                    return bothIn.await(20, TimeUnit.SECONDS) ? "second" : "alone";
                }));
            } catch (DeviceDriverException e) {
                other.set(e);
            }
        });
        second.start();
        String first = deadline.call("discovery", Duration.ofSeconds(30), KEY, () -> {
            bothIn.countDown();
            return bothIn.await(20, TimeUnit.SECONDS) ? "first" : "alone";
        });
        second.join(30_000);
        assertThat(first).isEqualTo("first");
        assertThat(other.get()).as("the call made while the first was under way").isEqualTo("second");
    }

    @Test
    @DisplayName("a call that does not return: one error naming the key within the timeout, later calls refused at once"
            + " until it returns, then called again")
    void callThatDoesNotReturn() throws Exception {
        NativeDeadline deadline = new NativeDeadline(LIBRARY, HINT);
        CountDownLatch release = new CountDownLatch(1);
        long start = System.nanoTime();
        assertThatThrownBy(() -> deadline.call("discovery (vendorInit)", Duration.ofMillis(200), KEY, () -> {
            // a call blocked in the kernel: it ignores interrupts
            while (true) {
                try {
                    if (release.await(10, TimeUnit.SECONDS)) {
                        return 1;
                    }
                } catch (InterruptedException e) {
                    // keeps waiting, as a native call does
                }
            }
        })).isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith(KEY + ": " + LIBRARY + " did not return from discovery (vendorInit) within 200 ms;"
                        + " the call is left running on a daemon thread");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("waited for the timeout, not for the call")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(deadline.blocked()).isTrue();

        long refused = System.nanoTime();
        assertThatThrownBy(() -> deadline.call("discovery (vendorInit)", Duration.ofSeconds(30), KEY, () -> 2))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith(LIBRARY + " has not returned from discovery (vendorInit), called at ")
                .hasMessageContaining("(" + KEY + ": 30 s)")
                .hasMessageContaining("it is not called again until it returns");
        assertThat(Duration.ofNanos(System.nanoTime() - refused)).as("refused at once, no second thread left waiting")
                .isLessThan(Duration.ofSeconds(5));

        release.countDown();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (deadline.blocked() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(deadline.call("discovery (vendorInit)", Duration.ofSeconds(10), KEY, () -> 3))
                .as("called again once the blocked call returned").isEqualTo(3);
    }
}
