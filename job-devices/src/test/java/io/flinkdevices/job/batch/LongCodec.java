package io.flinkdevices.job.batch;

import java.nio.ByteBuffer;

/** Tests' codec: a long in, the long the backend wrote back out; a result that is not its record fails. */
final class LongCodec implements BatchCodec<Long, Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public void encode(Long record, ByteBuffer input, int offset) {
        input.putLong(offset, record);
    }

    @Override
    public Long decode(Long record, ByteBuffer output, int offset) {
        long result = output.getLong(offset);
        if (result != record) {
            throw new IllegalStateException("result " + result + " came back for record " + record);
        }
        return result;
    }
}
