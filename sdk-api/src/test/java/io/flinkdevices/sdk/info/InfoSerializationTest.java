package io.flinkdevices.sdk.info;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;

/**
 * Job authors put infos into records and closures: Flink then serializes them with its Kryo
 * fallback (records) or Java serialization (closures). Both must give back an equal info with
 * the same properties.
 */
class InfoSerializationTest {

    private static final GpuInfo GPU =
            GpuInfo.builder("nvidia", 3)
                    .uuid("GPU-1234")
                    .name("NVIDIA H200")
                    .memoryBytes(141L << 30)
                    .architecture("sm_90")
                    .visibleDevices("CUDA_VISIBLE_DEVICES", "3")
                    .build();
    private static final FpgaInfo FPGA =
            FpgaInfo.builder("Portable Computing Language", 0, "cpu", 0).computeUnits(2).build();
    private static final RdmaInfo RDMA =
            RdmaInfo.builder("mlx5_0", 1).linkLayer("Ethernet").state("ACTIVE").build();

    @Test
    @DisplayName("infos travel in records through Flink's Kryo serializer")
    void kryoRoundTrip() throws Exception {
        for (Object info : new Object[] {GPU, FPGA, RDMA}) {
            Object copy = viaFlinkSerializer(info);
            assertThat(copy).isEqualTo(info).hasToString(info.toString());
        }
        assertThat(((GpuInfo) viaFlinkSerializer(GPU)).getKeys())
                .containsExactlyElementsOf(GPU.getKeys());
    }

    @Test
    @DisplayName("infos travel in closures through Java serialization")
    void javaSerializationRoundTrip() throws Exception {
        for (Object info : new Object[] {GPU, FPGA, RDMA}) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                out.writeObject(info);
            }
            try (ObjectInputStream in =
                    new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
                Object copy = in.readObject();
                assertThat(copy).isEqualTo(info).hasToString(info.toString());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T viaFlinkSerializer(T value) throws Exception {
        TypeSerializer<T> serializer =
                TypeInformation.of((Class<T>) value.getClass())
                        .createSerializer(new SerializerConfigImpl());
        DataOutputSerializer out = new DataOutputSerializer(256);
        serializer.serialize(value, out);
        return serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    }
}
