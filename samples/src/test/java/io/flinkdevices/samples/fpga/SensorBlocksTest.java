package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashSet;
import java.util.Set;

class SensorBlocksTest {

    @ParameterizedTest(name = "{0} samples, {1} sensors, blocks of {2}, {3} groups")
    @CsvSource({"1000, 16, 64, 2", "1001, 7, 50, 3", "5, 16, 4, 2", "333, 3, 1000, 5", "64, 1, 8, 1"})
    void everySampleOnceInOrderFromOneGroup(long samples, int sensors, int blockSize, int groups) {
        SensorBlocks.Plan plan = new SensorBlocks.Plan(samples, sensors, blockSize, Math.min(groups, sensors));
        SensorBlocks.Generate generate = new SensorBlocks.Generate(plan);
        long[] next = new long[sensors];
        int[] groupOf = new int[sensors];
        java.util.Arrays.fill(groupOf, -1);
        Set<Long> seen = new HashSet<>();
        for (long b = 0; b < plan.blocks(); b++) {
            SampleBlock block = generate.map(b);
            int g = plan.groupOf(b);
            assertThat(block.count).isBetween(1, blockSize);
            for (int i = 0; i < block.count; i++) {
                int s = block.sensors[i];
                assertThat(block.seqs[i]).as("sensor %d in order", s).isEqualTo(next[s]++);
                assertThat(block.values[i]).isEqualTo(Fir.signal(s, block.seqs[i]));
                assertThat(groupOf[s] == -1 || groupOf[s] == g).as("sensor %d in one group", s).isTrue();
                groupOf[s] = g;
                assertThat(seen.add(block.seqs[i] * sensors + s)).isTrue();
            }
        }
        // exactly the samples of the one-subtask stream: i -> (i mod sensors, i / sensors)
        assertThat(seen).hasSize((int) samples);
        for (long i = 0; i < samples; i++) {
            assertThat(seen).contains(i);
        }
    }
}
