package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.Deployment;

/** {@code kubernetes.config-key} against the driver's {@code KubernetesResourceDecorator}. */
public final class KubernetesDecoratorCheck extends DecoratorCheck {

    /** The check. */
    public KubernetesDecoratorCheck() {
        super(Deployment.KUBERNETES);
    }
}
