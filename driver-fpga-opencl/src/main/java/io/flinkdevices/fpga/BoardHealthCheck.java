package io.flinkdevices.fpga;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Optional;

/**
 * How a board vendor adds its own health check to the OpenCL driver's monitor: OpenCL's {@code
 * CL_DEVICE_AVAILABLE} says only whether the runtime still offers a device; a board's own tool
 * (Xilinx {@code xbutil examine}, Intel {@code aocl diagnose}) knows about its temperature, its
 * memory, its shell. Implement this interface in a jar placed in the driver's plugin folder and
 * name the class in {@code external-resource.<name>.param.board-check.class}; the driver creates
 * it once per driver instance (public no-argument constructor), lets it read and validate its own
 * parameters ({@link #configure}), and calls {@link #check} for every handed-out board each {@code
 * monitor.interval}, after {@code CL_DEVICE_AVAILABLE} said yes.
 *
 * <p>A check runs on the monitor's thread, never in a task. It bounds its own work: run a tool
 * through sdk-api's {@code ExternalCommand} (argument list, timeout, both streams drained, the
 * process tree killed), never a shell string and never an unbounded wait. It returns the reason
 * when the board is unhealthy (one line: what the tool said), empty when healthy, and throws when
 * it could not look (the tool hung or printed garbage): the monitor counts that in {@code
 * monitor.errors} and keeps the previous health, so a tool hiccup alone never fails a board.
 */
@PublicEvolving
public interface BoardHealthCheck {

    /** The key naming the implementation class. */
    String CLASS_KEY = "board-check.class";

    /**
     * Reads this check's own parameters, by convention under {@code board-check.}; every key read
     * through {@code params} is known to the driver, and a problem recorded there is reported with
     * the driver's others, each naming its full key. Called once, before the first check.
     */
    default void configure(DriverParams params) {}

    /**
     * Checks one board.
     *
     * @param board the board as the driver handed it out (platform, device index and name, vendor)
     * @return empty when the board is healthy, else the reason it is not
     * @throws Exception when the check could not look at the board at all
     */
    Optional<String> check(FpgaInfo board) throws Exception;
}
