package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class IdVectorSerializerTest {

    @Test
    @DisplayName("Flink picks the compact serializer for IdVector, and vectors come back bit for bit")
    void roundTrip() throws Exception {
        TypeInformation<IdVector> info = TypeInformation.of(IdVector.class);
        assertThat(info).isInstanceOf(IdVectorTypeInfo.class);
        TypeSerializer<IdVector> s = info.createSerializer(new SerializerConfigImpl());
        IdVector a = IdVector.generate(12345, 256, 7L);
        a.values[3] = Float.NaN;
        a.values[4] = -0.0f;
        IdVector b = new IdVector(-1, new float[0]);
        DataOutputSerializer out = new DataOutputSerializer(64);
        s.serialize(a, out);
        s.serialize(b, out);
        assertThat(out.length()).isEqualTo(2 * (8 + 4) + 256 * 4);
        DataInputDeserializer in = new DataInputDeserializer(out.getSharedBuffer(), 0, out.length());
        IdVector a2 = s.deserialize(in);
        IdVector b2 = s.deserialize(in);
        assertThat(a2.id).isEqualTo(12345);
        for (int i = 0; i < 256; i++) {
            assertThat(Float.floatToRawIntBits(a2.values[i])).isEqualTo(Float.floatToRawIntBits(a.values[i]));
        }
        assertThat(b2.id).isEqualTo(-1);
        assertThat(b2.values).isEmpty();
        assertThat(s.copy(a).values).isNotSameAs(a.values).containsExactly(a.values);
    }
}
