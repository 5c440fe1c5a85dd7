package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.NoComputeBackend;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

class PipelineJobITCase {

    @ParameterizedTest(name = "{0}, {1}, parallelism {2}")
    @CsvSource({"CHAINED, CHECKSUM, 2", "CHAINED, COPY, 1", "NETWORK, CHECKSUM, 2", "NO_REUSE, COPY, 2"})
    @DisplayName("every vector reaches the no-compute backend intact and every result the sink, at any parallelism")
    void everyRecordArrivesIntact(PipelineJob.Variant variant, NoComputeBackend.Mode mode, int parallelism)
            throws Exception {
        // 1001 records of 17 floats: not a multiple of the batch, and a record that is not whole longs
        PipelineJob.Run run = PipelineJob.run(1001, 17, BatchSettings.of(64, 2, Duration.ofMillis(100)), parallelism,
                mode, variant);

        // run() throws when the sink's count or sum differs; the CPU figures are there to report
        assertThat(run.taskCpuNanos()).isPositive();
        assertThat(run.processCpuNanos()).isGreaterThanOrEqualTo(run.taskCpuNanos());
    }

    @ParameterizedTest(name = "{0} floats")
    @CsvSource({"1", "2", "17", "256"})
    @DisplayName("the expected checksum is the sum of each vector read as native-order longs, trailing bytes one by one")
    void expectedChecksumIsTheVectorsBytesAdded(int dims) {
        float[] template = PipelineJob.Vectors.template(dims);
        long expected = 0;
        for (long id = 0; id < 3; id++) {
            ByteBuffer b = ByteBuffer.allocate(dims * Float.BYTES).order(ByteOrder.nativeOrder());
            b.asFloatBuffer().put(template).put(0, id);
            int longs = b.capacity() / Long.BYTES;
            for (int j = 0; j < longs; j++) {
                expected += b.getLong(j * Long.BYTES);
            }
            for (int at = longs * Long.BYTES; at < b.capacity(); at++) {
                expected += b.get(at);
            }
        }

        assertThat(PipelineJob.expectedSum(3, dims, NoComputeBackend.Mode.CHECKSUM)).isEqualTo(expected);
    }
}
