/**
 * Hosts without hardware: {@link io.flinkdevices.testkit.fake.FakeExecutable} (a vendor tool that
 * prints what a test says and records its calls), {@link io.flinkdevices.testkit.fake.FakeFileTree}
 * (a sysfs-like tree) and {@link io.flinkdevices.testkit.fake.FakeHost}, which groups them with
 * the environment a driver would see. Deterministic and thread-safe; POSIX systems only. Driver
 * modules build their vendor hosts on top of these; {@link
 * io.flinkdevices.testkit.fake.FakeNvidiaHost} is one: a fake {@code nvidia-smi} printing what the
 * real tool prints for common NVIDIA GPUs, MIG on and off, and for drivers older than 510; its
 * {@link io.flinkdevices.testkit.fake.InstalledNvidiaHost} changes while a cluster runs (a GPU
 * removed, Xid and ECC events, load that moves) and writes the state a stand-in NVML reads.
 * {@link io.flinkdevices.testkit.fake.FirstSample} waits for a driver's monitor to sample the
 * infos it handed out.
 */
package io.flinkdevices.testkit.fake;
