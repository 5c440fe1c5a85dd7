package io.flinkdevices.samples.gpu;

import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.lang.reflect.Type;
import java.util.Map;

/**
 * Flink's type information for {@link IdVector}: {@link IdVectorSerializer}. {@code IdVector}
 * names it with {@code @TypeInfo}, so every stream of vectors uses it without being told.
 */
public final class IdVectorTypeInfo extends TypeInformation<IdVector> {

    private static final long serialVersionUID = 1L;

    /** The factory {@code @TypeInfo} names. */
    public static final class Factory extends TypeInfoFactory<IdVector> {
        @Override
        public TypeInformation<IdVector> createTypeInfo(Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new IdVectorTypeInfo();
        }
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    public Class<IdVector> getTypeClass() {
        return IdVector.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<IdVector> createSerializer(SerializerConfig config) {
        return new IdVectorSerializer();
    }

    @Override
    public String toString() {
        return "IdVector (id, float[] as one block)";
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof IdVectorTypeInfo;
    }

    @Override
    public int hashCode() {
        return IdVectorTypeInfo.class.hashCode();
    }

    @Override
    public boolean canEqual(Object obj) {
        return obj instanceof IdVectorTypeInfo;
    }
}
