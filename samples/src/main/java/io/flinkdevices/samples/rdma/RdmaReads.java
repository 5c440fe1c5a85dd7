package io.flinkdevices.samples.rdma;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;

import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * The work requests of one batch of one-sided RDMA READs: one READ per key, from the key's vector
 * in the server's registered table ({@code remoteAddr + key * bytes}) into the key's slot of the
 * client's registered buffer ({@code localAddr + i * bytes}). The requests go out in chunks of at
 * most {@code maxWr} (the queue pair's send queue); only the last READ of a chunk is signaled, since
 * a reliable connection completes them in order.
 */
final class RdmaReads {

    private RdmaReads() {}

    /** The chunks of READs for {@code keys[0..count)}. */
    static List<LinkedList<IbvSendWR>> chunks(
            long[] keys, int count, int bytes, long localAddr, int lkey, long remoteAddr, int rkey, int maxWr) {
        List<LinkedList<IbvSendWR>> chunks = new ArrayList<>();
        LinkedList<IbvSendWR> chunk = new LinkedList<>();
        for (int i = 0; i < count; i++) {
            IbvSge sge = new IbvSge();
            sge.setAddr(localAddr + (long) i * bytes);
            sge.setLength(bytes);
            sge.setLkey(lkey);
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvSendWR wr = new IbvSendWR();
            wr.setWr_id(i);
            wr.setSg_list(sges);
            wr.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
            wr.getRdma().setRemote_addr(remoteAddr + keys[i] * bytes);
            wr.getRdma().setRkey(rkey);
            chunk.add(wr);
            if (chunk.size() == maxWr || i == count - 1) {
                chunk.getLast().setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
                chunks.add(chunk);
                chunk = new LinkedList<>();
            }
        }
        return chunks;
    }
}
