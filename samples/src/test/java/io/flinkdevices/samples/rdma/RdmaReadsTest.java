package io.flinkdevices.samples.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import com.ibm.disni.verbs.IbvSendWR;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.LinkedList;
import java.util.List;

/** The RDMA READs of a batch, built without a device: what each READ reads and where it lands. */
class RdmaReadsTest {

    @Test
    @DisplayName("one READ per key, from the key's vector in the server's region into the key's slot, last of each chunk signaled")
    void readsPerKey() {
        long[] keys = {7, 0, 7, 1_000_000};
        int bytes = 256;
        List<LinkedList<IbvSendWR>> chunks = RdmaReads.chunks(keys, 4, bytes, 0x1000, 11, 0x7f0000000000L, 42, 3);

        assertThat(chunks).hasSize(2);
        assertThat(chunks.get(0)).hasSize(3);
        assertThat(chunks.get(1)).hasSize(1);
        int i = 0;
        for (LinkedList<IbvSendWR> chunk : chunks) {
            for (IbvSendWR wr : chunk) {
                assertThat(wr.getOpcode()).isEqualTo(IbvSendWR.IBV_WR_RDMA_READ);
                assertThat(wr.getWr_id()).isEqualTo(i);
                assertThat(wr.getRdma().getRemote_addr()).isEqualTo(0x7f0000000000L + keys[i] * bytes);
                assertThat(wr.getRdma().getRkey()).isEqualTo(42);
                assertThat(wr.getSg_list()).hasSize(1);
                assertThat(wr.getSg_list().getFirst().getAddr()).isEqualTo(0x1000 + (long) i * bytes);
                assertThat(wr.getSg_list().getFirst().getLength()).isEqualTo(bytes);
                assertThat(wr.getSg_list().getFirst().getLkey()).isEqualTo(11);
                boolean last = wr == chunk.getLast();
                assertThat(wr.getSend_flags()).as("READ %d signaled", i).isEqualTo(last ? IbvSendWR.IBV_SEND_SIGNALED : 0);
                i++;
            }
        }
        assertThat(i).isEqualTo(4);
    }

    @Test
    @DisplayName("the key offset is computed in 64 bits: a key past 2^31 / bytes still reads its own vector")
    void largeOffsets() {
        long key = 50_000_000L;
        IbvSendWR wr = RdmaReads.chunks(new long[] {key}, 1, 256, 0, 0, 0, 0, 128).get(0).getFirst();
        assertThat(wr.getRdma().getRemote_addr()).isEqualTo(key * 256);
    }
}
