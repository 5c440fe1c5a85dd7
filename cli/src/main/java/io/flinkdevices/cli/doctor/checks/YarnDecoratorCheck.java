package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.Deployment;

/** {@code yarn.config-key} against the driver's {@code YarnResourceDecorator}. */
public final class YarnDecoratorCheck extends DecoratorCheck {

    /** The check. */
    public YarnDecoratorCheck() {
        super(Deployment.YARN);
    }
}
