package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A board check as a vendor writes one: runs the board's tool ({@code board-check.tool}, e.g. a
 * wrapper around {@code xbutil examine -d <bdf>}) with the board's device name, through sdk-api's
 * bounded process runner, and reads its one-line verdict: {@code ok}, or {@code failed: <reason>}.
 * Anything else, a non-zero exit or a hang past {@code board-check.timeout} means it could not look
 * (the monitor counts it, the board's health stays).
 */
public final class ToolBoardCheck implements BoardHealthCheck {

    static final String TOOL = "board-check.tool";
    static final String TIMEOUT = "board-check.timeout";

    private Path tool;
    private Duration timeout;
    private String toolKey;

    @Override
    public void configure(DriverParams params) {
        tool = params.path(TOOL, null, DriverParams.PathCheck.EXECUTABLE);
        if (tool == null && !params.isSet(TOOL)) {
            params.problem(TOOL, "expected the path of the board's check tool, which " + getClass().getName() + " runs");
        }
        timeout = params.duration(TIMEOUT, Duration.ofSeconds(5));
        toolKey = params.fullKey(TOOL);
    }

    @Override
    public Optional<String> check(FpgaInfo board) throws DeviceDriverException {
        ExternalCommand.Result r = ExternalCommand.of(tool, List.of(board.getDeviceName()), timeout, toolKey).run();
        String out = r.stdout().strip();
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(toolKey + ": " + tool + " exited with " + r.exitCode() + ": " + r.stderrTail());
        }
        if (out.equals("ok")) {
            return Optional.empty();
        }
        if (out.startsWith("failed: ") && out.lines().count() == 1) {
            return Optional.of(out.substring("failed: ".length()));
        }
        throw new DeviceDriverException(toolKey + ": " + tool + " printed '" + out + "'; expected 'ok' or 'failed: <reason>'");
    }
}
