package io.flinkdevices.sdk.archviolation;

import org.apache.flink.annotation.PublicEvolving;

import com.ibm.disni.verbs.IbvContext;
import jcuda.runtime.JCuda;
import org.jocl.CL;

/** Calls vendor native bindings from the SDK. */
@PublicEvolving
public final class NativeLeak {
    /** Uses JCuda, JOCL and DiSNI. */
    public static int devices() {
        return JCuda.touch() + CL.touch() + IbvContext.touch();
    }
}
