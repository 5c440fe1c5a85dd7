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

    @Test
    @DisplayName("a timeout out of range is named as given: never rounded to a value that looks allowed, never an overflow")
    void timeoutAsGiven() {
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ofNanos(999_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is 0.999 ms (PT0.000999S)");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ofHours(1).plusNanos(1)))
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is 3600000.000001 ms (PT1H0.000000001S)");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is 9223372036854775807000 ms");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, Duration.ofMillis(-5)))
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is -5 ms");
        assertThatThrownBy(() -> BatchSettings.of(256, 2, null))
                .hasMessage("batch timeout must be 1 ms to 1 h (3600000 ms), but is missing");
        assertThat(BatchSettings.of(256, 2, Duration.ofHours(1)).timeoutMillis()).isEqualTo(3_600_000);
    }

    @Test
    @DisplayName("the backend timeout defaults to 2 minutes and is checked like the batch timeout")
    void backendTimeout() {
        assertThat(BatchSettings.of(256, 2).backendTimeout()).isEqualTo(Duration.ofMinutes(2));
        BatchSettings s = BatchSettings.of(256, 2, Duration.ofMillis(20)).withBackendTimeout(Duration.ofSeconds(5));
        assertThat(s.backendTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(s.timeoutMillis()).isEqualTo(20);
        assertThat(s.batchSize()).isEqualTo(256);
        assertThatThrownBy(() -> s.withBackendTimeout(Duration.ofNanos(1)))
                .hasMessage("backend timeout must be 1 ms to 1 h (3600000 ms), but is 0.000001 ms (PT0.000000001S)");
        assertThatThrownBy(() -> s.withBackendTimeout(Duration.ofDays(1)))
                .hasMessage("backend timeout must be 1 ms to 1 h (3600000 ms), but is 86400000 ms");
    }
}
