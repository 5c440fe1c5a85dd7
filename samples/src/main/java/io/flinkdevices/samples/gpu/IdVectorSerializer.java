package io.flinkdevices.samples.gpu;

import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A compact serializer for {@link IdVector}, for where vectors cross the network (a {@code keyBy},
 * a {@code rebalance}, a change of parallelism): the id, the length and the floats as one block of
 * bytes, written and read with one bulk copy instead of the POJO serializer's per-field null flags
 * and per-float calls. Format: {@code long id}, {@code int n}, {@code n} floats, big-endian.
 * Holds a scratch buffer, so {@link #duplicate()} gives each thread its own.
 */
public final class IdVectorSerializer extends TypeSerializer<IdVector> {

    private static final long serialVersionUID = 1L;

    private static final VarHandle FLOATS =
            MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.BIG_ENDIAN);

    private transient byte[] scratch;

    private byte[] scratch(int bytes) {
        if (scratch == null || scratch.length < bytes) {
            scratch = new byte[bytes];
        }
        return scratch;
    }

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public TypeSerializer<IdVector> duplicate() {
        return new IdVectorSerializer();
    }

    @Override
    public IdVector createInstance() {
        return new IdVector(0, new float[0]);
    }

    @Override
    public IdVector copy(IdVector from) {
        return new IdVector(from.id, from.values == null ? null : from.values.clone());
    }

    @Override
    public IdVector copy(IdVector from, IdVector reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(IdVector record, DataOutputView target) throws IOException {
        float[] v = record.values;
        target.writeLong(record.id);
        target.writeInt(v.length);
        byte[] b = scratch(v.length * Float.BYTES);
        for (int i = 0; i < v.length; i++) {
            FLOATS.set(b, i * Float.BYTES, v[i]);
        }
        target.write(b, 0, v.length * Float.BYTES);
    }

    @Override
    public IdVector deserialize(DataInputView source) throws IOException {
        long id = source.readLong();
        int n = source.readInt();
        if (n < 0) {
            throw new IOException("an IdVector of " + n + " floats: the stream is not IdVectorSerializer's format");
        }
        byte[] b = scratch(n * Float.BYTES);
        source.readFully(b, 0, n * Float.BYTES);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) FLOATS.get(b, i * Float.BYTES);
        }
        return new IdVector(id, v);
    }

    @Override
    public IdVector deserialize(IdVector reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        target.writeLong(source.readLong());
        int n = source.readInt();
        target.writeInt(n);
        target.write(source, n * Float.BYTES);
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof IdVectorSerializer;
    }

    @Override
    public int hashCode() {
        return IdVectorSerializer.class.hashCode();
    }

    @Override
    public TypeSerializerSnapshot<IdVector> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The serializer has no configuration: a snapshot only names it. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<IdVector> {
        /** For Flink's snapshot reader. */
        public Snapshot() {
            super(IdVectorSerializer::new);
        }
    }
}
