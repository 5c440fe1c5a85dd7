package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.CoordinationFile;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The other process in coordination tests: a TaskManager stand-in that allocates, holds the lock
 * or contends in a loop, and reports on stdout.
 *
 * <pre>
 * hold-lock &lt;file&gt; &lt;millis&gt;                      take the file's lock, print LOCKED, hold it
 * allocate-exit &lt;file&gt; &lt;amount&gt; &lt;id&gt;...          allocate, print ALLOCATED ids, exit normally
 * allocate-hold &lt;file&gt; &lt;amount&gt; &lt;id&gt;...          allocate, print ALLOCATED ids, wait to be killed
 * stress &lt;file&gt; &lt;log&gt; &lt;devices&gt; &lt;rounds&gt; &lt;seed&gt; &lt;victim&gt;
 * keep-alive &lt;file&gt; &lt;millis&gt; &lt;amount&gt; &lt;id&gt;...   keep-alive every millis, allocate, hold
 * try-allocate &lt;file&gt; &lt;timeout ms&gt; &lt;amount&gt; &lt;id&gt;...  allocate; print ALLOCATED ids or FAILED exception, exit
 * crash-writer &lt;file&gt; &lt;seed&gt; &lt;id&gt;...            allocate and release at random, then die in a write:
 *                                                  halt, or print MIDWRITE and wait for SIGKILL
 * </pre>
 */
public final class CoordinationChild {

    private CoordinationChild() {}

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[1]);
        switch (args[0]) {
            case "hold-lock":
                new CoordinationFile(file, Duration.ofSeconds(30), false)
                        .transact(
                                locked -> {
                                    System.out.println("LOCKED");
                                    System.out.flush();
                                    sleep(Long.parseLong(args[2]));
                                    return null;
                                });
                System.out.println("UNLOCKED");
                break;
            case "allocate-exit":
            case "allocate-hold":
                List<String> got =
                        DeviceCoordinator.create(CoordinationParams.of(file))
                                .allocate(
                                        Arrays.asList(args).subList(3, args.length),
                                        Long.parseLong(args[2]));
                System.out.println("ALLOCATED " + String.join(",", got));
                System.out.flush();
                if (args[0].equals("allocate-hold")) {
                    sleep(Long.MAX_VALUE);
                }
                break;
            case "stress":
                stress(
                        file,
                        Path.of(args[2]),
                        Integer.parseInt(args[3]),
                        Integer.parseInt(args[4]),
                        Long.parseLong(args[5]),
                        Boolean.parseBoolean(args[6]));
                break;
            case "keep-alive":
                CoordinationFile.setKeepAliveInterval(Duration.ofMillis(Long.parseLong(args[2])));
                List<String> held =
                        DeviceCoordinator.create(CoordinationParams.of(file))
                                .allocate(Arrays.asList(args).subList(4, args.length), Long.parseLong(args[3]));
                System.out.println("ALLOCATED " + String.join(",", held));
                System.out.flush();
                sleep(Long.MAX_VALUE);
                break;
            case "try-allocate":
                try {
                    List<String> ok =
                            DeviceCoordinator.create(
                                            CoordinationParams.of(file)
                                                    .withLockTimeout(Duration.ofMillis(Long.parseLong(args[2]))))
                                    .allocate(Arrays.asList(args).subList(4, args.length), Long.parseLong(args[3]));
                    System.out.println("ALLOCATED " + String.join(",", ok));
                } catch (Exception e) {
                    System.out.println("FAILED " + e);
                }
                break;
            case "crash-writer":
                crashWriter(file, Long.parseLong(args[2]), Arrays.asList(args).subList(3, args.length));
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    /**
     * Allocates 1 to 3 devices, holds them for a few milliseconds and releases them, {@code
     * rounds} times. Every acquisition and release is logged with {@link System#nanoTime()}
     * (CLOCK_MONOTONIC on Linux, one clock for every process of the host) in one write per line,
     * so that a line is never torn when the process is killed. A victim stops half way with
     * devices held, prints HOLDING and waits to be killed.
     */
    private static void stress(
            Path file, Path log, int devices, int rounds, long seed, boolean victim)
            throws IOException, DeviceDriverException {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < devices; i++) {
            ids.add(Integer.toString(i));
        }
        Random random = new Random(seed);
        DeviceCoordinator coordinator =
                DeviceCoordinator.create(CoordinationParams.of(file).withLockTimeout(Duration.ofSeconds(60)));
        int acquired = 0;
        int refused = 0;
        try (OutputStream out = new FileOutputStream(log.toFile(), true)) {
            System.out.println("STARTED");
            System.out.flush();
            for (int round = 0; round < rounds; round++) {
                List<String> candidates = new ArrayList<>(ids);
                java.util.Collections.rotate(candidates, random.nextInt(devices));
                int amount = 1 + random.nextInt(3);
                List<String> got;
                try {
                    got = coordinator.allocate(candidates, amount);
                } catch (DeviceDriverException e) {
                    if (!e.getMessage().startsWith("cannot allocate")) {
                        throw e;
                    }
                    refused++;
                    sleep(1 + random.nextInt(3));
                    continue;
                }
                acquired++;
                write(out, "A " + System.nanoTime() + " " + String.join(",", got));
                if (victim && round >= rounds / 2) {
                    System.out.println("HOLDING " + String.join(",", got));
                    System.out.flush();
                    sleep(Long.MAX_VALUE);
                }
                sleep(1 + random.nextInt(5));
                write(out, "R " + System.nanoTime() + " " + String.join(",", got));
                coordinator.release(got);
            }
            write(out, "DONE " + acquired + " " + refused);
        }
        System.out.println("DONE " + acquired + " " + refused);
    }

    /**
     * Allocates and releases a few times, then dies inside a write: the fault writes a random
     * prefix of what the writer planned (appended part first, then the old part, as the writer
     * orders them) and either halts the JVM at once (as SIGKILL would: no shutdown hook runs) or
     * prints MIDWRITE and waits for the test's SIGKILL.
     */
    private static void crashWriter(Path file, long seed, List<String> ids) throws Exception {
        Random random = new Random(seed);
        int writesBeforeCrash = random.nextInt(4);
        boolean halt = random.nextBoolean();
        int[] writes = {0};
        CoordinationFile.injectWriteFault(
                (ch, plan, oldLength) -> {
                    if (writes[0]++ < writesBeforeCrash) {
                        return;
                    }
                    int headLength = plan.head == null ? 0 : plan.head.length;
                    int total = plan.tail.length + headLength;
                    int cut = total == 0 ? 0 : random.nextInt(total + 1);
                    int fromTail = Math.min(cut, plan.tail.length);
                    ch.write(java.nio.ByteBuffer.wrap(plan.tail, 0, fromTail), oldLength);
                    if (cut > fromTail) {
                        ch.write(java.nio.ByteBuffer.wrap(plan.head, 0, cut - fromTail), 0);
                    }
                    if (halt) {
                        Runtime.getRuntime().halt(137);
                    }
                    System.out.println("MIDWRITE " + cut + " of " + total);
                    System.out.flush();
                    sleep(Long.MAX_VALUE);
                });
        DeviceCoordinator c = DeviceCoordinator.create(CoordinationParams.of(file));
        List<String> mine = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            if (!mine.isEmpty() && random.nextBoolean()) {
                List<String> some = mine.subList(0, 1 + random.nextInt(mine.size()));
                c.release(new ArrayList<>(some));
                some.clear();
            } else {
                try {
                    mine.addAll(c.allocate(ids, 1 + random.nextInt(2)));
                } catch (DeviceDriverException e) {
                    if (!e.getMessage().startsWith("cannot allocate")) {
                        throw e;
                    }
                    c.releaseAll();
                    mine.clear();
                }
            }
        }
        System.out.println("NO CRASH");
    }

    private static void write(OutputStream out, String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
