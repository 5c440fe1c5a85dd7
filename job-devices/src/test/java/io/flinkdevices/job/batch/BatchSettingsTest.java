package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;

class BatchSettingsTest {

    @Test
    @DisplayName("a batch size, slot count or timeout out of range names itself and its range")
    void outOfRange() {
        assertThatThrownBy(() -> BatchSettings.of(0, 2))
                .hasMessage("batch size must be 1 to 1048576 records, but is 0");
        assertThatThrownBy(() -> BatchSettings.of(1 << 21, 2))
                .hasMessage("batch size must be 1 to 1048576 records, but is 2097152");
        assertThatThrownBy(() -> BatchSettings.of(256, 0))
                .hasMessage("slots (batches in flight) must be 1 to 16, but is 0");
        assertThatThrownBy(() -> BatchSettings.of(256, 17))
                .hasMessage("slots (batches in flight) must be 1 to 16, but is 17");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ZERO))
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is 0 ms");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ofHours(2)))
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is 7200000 ms");
    }

    @Test
    @DisplayName("settings in range keep their values")
    void inRange() {
        BatchSettings s = BatchSettings.of(4096, 3, Duration.ofMillis(20));
        assertThat(s.batchSize()).isEqualTo(4096);
        assertThat(s.slots()).isEqualTo(3);
        assertThat(s.timeoutMillis()).isEqualTo(20);
        assertThat(BatchSettings.of(1, 1).timeout()).isEqualTo(BatchSettings.DEFAULT_TIMEOUT);
    }

    @Test
    @DisplayName("a batch that would not fit one buffer is refused")
    void tooLargeForOneBuffer() {
        assertThatThrownBy(() -> NoComputeBackend.open(NoComputeBackend.Mode.COPY, BatchSettings.of(1 << 20, 1), 4096))
                .hasMessage("input record size must be at least 1 byte and batch size x record size at most 2147483647"
                        + " bytes, but is 1048576 x 4096");
    }

    @Test
    @DisplayName("the no-compute backend's checksum is the record's sum as longs, trailing bytes added")
    void checksum() {
        NoComputeBackend b = NoComputeBackend.open(NoComputeBackend.Mode.CHECKSUM, BatchSettings.of(2, 1), 10);
        ByteBuffer in = b.input(0);
        in.putLong(0, 5).put(8, (byte) 1).put(9, (byte) 2);
        in.putLong(10, -7).put(18, (byte) 0).put(19, (byte) 3);
        b.start(0, 2);
        b.finish(0);
        assertThat(b.outputRecordBytes()).isEqualTo(8);
        assertThat(b.output(0).getLong(0)).isEqualTo(8);
        assertThat(b.output(0).getLong(8)).isEqualTo(-4);
    }
}
