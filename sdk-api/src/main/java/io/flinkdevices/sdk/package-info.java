/**
 * The SDK for flink-devices drivers: what a driver for Flink's external-resource framework is
 * built from ({@code config}, {@code process}, {@code host}, {@code info}, {@code coordination},
 * {@code health}, {@code deploy}) and its one exception type, {@link
 * io.flinkdevices.sdk.DeviceDriverException}.
 *
 * <h2>A driver's lifecycle</h2>
 *
 * <p>Flink creates one driver per resource and TaskManager, calls {@code
 * retrieveResourceInfo(amount)} (once, in a TaskManager) and never closes it: its external-resource
 * API has no close hook. What a driver starts that outlives that call is therefore bound by
 * these rules, which the contract kit checks (its {@code Lifecycle} cases):
 *
 * <ul>
 *   <li>A driver that starts a {@link io.flinkdevices.sdk.health.DeviceMonitor} or takes devices
 *       through a {@link io.flinkdevices.sdk.coordination.DeviceCoordinator} implements {@link
 *       java.lang.AutoCloseable}.
 *   <li>When its {@code close()} returns, the driver's monitor thread has ended ({@code
 *       DeviceMonitor.stop()} waits for it), no process the driver started runs, no tool of it is
 *       called again, and the coordination records this driver took are released ({@code
 *       DeviceCoordinator.releaseAllocated()}: what its own coordinator took, never {@code
 *       releaseAll()}, since two TaskManagers of a local cluster share one process). {@code close()} may be called any
 *       number of times; the infos handed out keep their fixed properties and their last live
 *       values.
 *   <li>Nobody closes a driver in a TaskManager, so without {@code close()} the same ends come on
 *       their own: the monitor ends once no info it handed out is reachable (or its thread is
 *       interrupted), and the records are released when the process exits normally (a killed
 *       TaskManager's records are reclaimed by the next allocation on the host). {@code close()}
 *       is for everything else that creates drivers: tools such as the CLI, tests, a restart
 *       inside one JVM.
 * </ul>
 */
package io.flinkdevices.sdk;
