package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

class BackendThreadTest {

    /** Released at the end of each test, so no stuck call outlives it. */
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void releaseStuckCalls() {
        release.countDown();
    }

    /** A call that ignores interrupts until released, as a native wait does. */
    private Integer stuck() {
        while (true) {
            try {
                release.await();
                return 7;
            } catch (InterruptedException e) {
                // as native code would: carry on waiting
            }
        }
    }

    @Test
    @DisplayName("calls run on the backend thread, one at a time, and return their result or throw their exception")
    void runsCalls() throws Exception {
        BackendThread t = BackendThread.start("backend-test", TimeUnit.SECONDS.toNanos(10), 4);
        assertThat(t.call("name", () -> Thread.currentThread().getName())).isEqualTo("backend-test");
        for (int i = 0; i < 10_000; i++) {
            int n = i;
            assertThat(t.call("echo", () -> n)).isEqualTo(n);
        }
        assertThatThrownBy(() -> t.call("fail", () -> {
            throw new Exception("CUDA_ERROR_LAUNCH_FAILED");
        })).hasMessage("CUDA_ERROR_LAUNCH_FAILED");
        assertThatThrownBy(() -> t.call("error", () -> {
            throw new OutOfMemoryError("Direct buffer memory");
        })).isInstanceOf(IllegalStateException.class).hasMessage("java.lang.OutOfMemoryError: Direct buffer memory");
        AtomicReference<String> closedOn = new AtomicReference<>();
        assertThat(t.close(last -> closedOn.set(Thread.currentThread().getName()))).isNull();
        assertThat(closedOn.get()).isEqualTo("backend-test");
    }

    @Test
    @DisplayName("a call that never returns fails at the timeout; later calls fail at once; close waits for the call")
    void stuckCall() throws Exception {
        BackendThread t = BackendThread.start("backend-stuck", TimeUnit.MILLISECONDS.toNanos(200), 4);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> t.call("the backend's finish", this::stuck))
                .isInstanceOf(TimeoutException.class)
                .hasMessage("the backend's finish did not return within 200 ms (the backend timeout of the operator's"
                        + " BatchSettings); it is left running on thread 'backend-stuck', and the backend is closed"
                        + " there if it ever returns");
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(waited).as("waited about the timeout").isBetween(190L, 5_000L);

        assertThatThrownBy(() -> t.call("the backend's start", () -> 1))
                .hasMessage("the backend is still in the backend's finish on thread 'backend-stuck', which did not"
                        + " return: no further call is made");

        CountDownLatch closed = new CountDownLatch(1);
        AtomicReference<Object> closedWith = new AtomicReference<>();
        String notYet = t.close(last -> {
            closedWith.set(last);
            closed.countDown();
        });
        assertThat(notYet).startsWith("the backend's finish has not returned after ")
                .endsWith("; thread 'backend-stuck' keeps the backend until it does, and closes it then");
        assertThat(closed.getCount()).as("not closed beside the running call").isEqualTo(1);
        release.countDown();
        assertThat(closed.await(10, TimeUnit.SECONDS)).as("closed once the call returned").isTrue();
        assertThat(closedWith.get()).as("handed the stuck call's result (the backend, for a stuck open)").isEqualTo(7);
    }

    @Test
    @DisplayName("an interrupt (Flink cancelling the task) ends the wait at once")
    void interrupt() throws Exception {
        BackendThread t = BackendThread.start("backend-interrupted", TimeUnit.SECONDS.toNanos(60), 4);
        Thread task = Thread.currentThread();
        Thread canceller = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            task.interrupt();
        });
        canceller.start();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> t.call("the backend's finish", this::stuck))
                .isInstanceOf(InterruptedException.class)
                .hasMessage("interrupted while waiting for the backend's finish on thread 'backend-interrupted'");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(10_000L);
        canceller.join();
    }

    @Test
    @DisplayName("a call given up on that returned later lets close run at once")
    void lateReturn() throws Exception {
        BackendThread t = BackendThread.start("backend-late", TimeUnit.MILLISECONDS.toNanos(50), 4);
        CountDownLatch returned = new CountDownLatch(1);
        assertThatThrownBy(() -> t.call("the backend's finish", () -> {
            Thread.sleep(300);
            returned.countDown();
            return 1;
        })).isInstanceOf(TimeoutException.class);
        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(50);
        AtomicReference<String> closedOn = new AtomicReference<>();
        assertThat(t.close(last -> closedOn.set(Thread.currentThread().getName()))).isNull();
        assertThat(closedOn.get()).isEqualTo("backend-late");
    }

    @Test
    @DisplayName("posted calls run in order before the next call, which reports the first posted failure by name")
    void postedCalls() throws Exception {
        BackendThread t = BackendThread.start("backend-posted", TimeUnit.SECONDS.toNanos(10), 3);
        java.util.List<Integer> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        for (int i = 0; i < 100; i++) {
            int n = i;
            t.post("the backend's start", () -> order.add(n));
        }
        assertThat(t.call("the backend's finish", () -> order.size())).isEqualTo(100);
        assertThat(order).isSorted().hasSize(100);

        t.post("the backend's start", () -> {
            throw new Exception("CUDA_ERROR_ILLEGAL_ADDRESS");
        });
        assertThatThrownBy(() -> t.call("the backend's finish", () -> 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the backend's start failed: CUDA_ERROR_ILLEGAL_ADDRESS")
                .hasRootCauseMessage("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(t.call("the backend's finish", () -> 2)).as("reported once").isEqualTo(2);
        assertThat(t.close(last -> {})).isNull();
    }

    @Test
    @DisplayName("a posted call that never returns fails the next call at its own deadline, naming it")
    void stuckPostedCall() throws Exception {
        BackendThread t = BackendThread.start("backend-posted-stuck", TimeUnit.MILLISECONDS.toNanos(200), 3);
        t.post("the backend's start", this::stuck);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> t.call("the backend's finish", () -> 1))
                .isInstanceOf(TimeoutException.class)
                .hasMessageStartingWith("the backend's start did not return within 200 ms");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isBetween(150L, 5_000L);
        CountDownLatch closed = new CountDownLatch(1);
        assertThat(t.close(last -> closed.countDown())).startsWith("the backend's start has not returned after ");
        release.countDown();
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
    }
}
