package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MatrixVectorJobArgsTest {

    @Test
    @DisplayName("--gpus and --per-gpu set the parallelism to their product")
    void parallelismPerGpu() {
        MatrixVectorJobArgs a = MatrixVectorJobArgs.parse("--gpus", "2", "--per-gpu", "3", "--slots", "3");
        assertThat(a.jobParallelism()).isEqualTo(6);
        assertThat(a.settings().slots()).isEqualTo(3);
        assertThat(MatrixVectorJobArgs.parse().jobParallelism()).isEqualTo(-1);
        assertThat(MatrixVectorJobArgs.parse("--parallelism", "4").jobParallelism()).isEqualTo(4);
    }

    @Test
    @DisplayName("a batching or parallelism value out of range names the option and the range")
    void outOfRange() {
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--per-gpu", "17"))
                .hasMessage("--per-gpu must be 1 to 16 subtasks per GPU, but is 17");
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--per-gpu", "2", "--parallelism", "4"))
                .hasMessage("--per-gpu and --parallelism both set the parallelism: give one of them");
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--slots", "20"))
                .hasMessage("--slots: slots (batches in flight) must be 1 to 16, but is 20");
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--batch", "2000000"))
                .hasMessage("--batch: batch size must be 1 to 1048576 records, but is 2000000");
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--timeout-ms", "3600001"))
                .hasMessage("--timeout-ms: batch timeout must be 1 ms to 1 h (3600000 ms), but is 3600001 ms");
        assertThatThrownBy(() -> MatrixVectorJobArgs.parse("--timeout-ms", "0"))
                .hasMessage("--timeout-ms must be a positive whole number, but is '0'");
    }
}
