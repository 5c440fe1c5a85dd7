package io.flinkdevices.testkit.internal;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads the classes a class file refers to from its constant pool, without loading it.
 *
 * <p>Only {@code CONSTANT_Class} entries count: the classes the code instantiates, calls, extends,
 * casts to or catches. Annotation types used only as annotations are not among them, which is what
 * a class loader check wants (a missing annotation type never fails class loading).
 */
public final class ClassFileReferences {

    private static final int MAGIC = 0xCAFEBABE;

    private ClassFileReferences() {}

    /**
     * The binary names ({@code a.b.C$D}) of the classes {@code classFile} refers to, array element
     * types included, the class itself excluded.
     *
     * @throws IOException when the bytes are not a class file
     */
    public static Set<String> of(byte[] classFile) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != MAGIC) {
            throw new IOException("not a class file (bad magic number)");
        }
        in.readUnsignedShort(); // minor version
        in.readUnsignedShort(); // major version
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNameIndex = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1: // Utf8
                    utf8[i] = in.readUTF();
                    break;
                case 7: // Class
                    classNameIndex[i] = in.readUnsignedShort();
                    break;
                case 8: // String
                case 16: // MethodType
                case 19: // Module
                case 20: // Package
                    in.skipBytes(2);
                    break;
                case 15: // MethodHandle
                    in.skipBytes(3);
                    break;
                case 3: // Integer
                case 4: // Float
                case 9: // Fieldref
                case 10: // Methodref
                case 11: // InterfaceMethodref
                case 12: // NameAndType
                case 17: // Dynamic
                case 18: // InvokeDynamic
                    in.skipBytes(4);
                    break;
                case 5: // Long
                case 6: // Double
                    in.skipBytes(8);
                    i++; // takes two slots
                    break;
                default:
                    throw new IOException("unknown constant pool tag " + tag + " at entry " + i);
            }
        }
        in.readUnsignedShort(); // access flags
        int thisClass = in.readUnsignedShort();

        Set<String> out = new TreeSet<>();
        for (int i = 1; i < count; i++) {
            if (classNameIndex[i] == 0 || i == thisClass) {
                continue;
            }
            String name = utf8[classNameIndex[i]];
            if (name == null) {
                continue;
            }
            int dims = 0;
            while (dims < name.length() && name.charAt(dims) == '[') {
                dims++;
            }
            if (dims > 0) {
                // array of primitives ([I) or of objects ([Lpkg/C;)
                if (name.charAt(dims) != 'L' || !name.endsWith(";")) {
                    continue;
                }
                name = name.substring(dims + 1, name.length() - 1);
            }
            out.add(name.replace('/', '.'));
        }
        return out;
    }
}
