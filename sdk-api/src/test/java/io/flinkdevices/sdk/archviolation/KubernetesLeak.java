package io.flinkdevices.sdk.archviolation;

import org.apache.flink.annotation.PublicEvolving;

import io.fabric8.kubernetes.api.model.Quantity;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;

/** Builds Kubernetes client objects instead of handing out plain maps. */
@PublicEvolving
public final class KubernetesLeak {
    /** Uses fabric8. */
    public static int fabric8() {
        return Quantity.touch();
    }

    /** Uses the official Kubernetes client. */
    public static int official() {
        return V1ResourceRequirements.touch();
    }
}
