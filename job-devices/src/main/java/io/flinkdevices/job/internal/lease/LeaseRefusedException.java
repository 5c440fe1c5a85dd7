package io.flinkdevices.job.internal.lease;

/** The lease table could not grant an ask; the message says why, naming resource, amount and holders. */
public final class LeaseRefusedException extends Exception {

    private static final long serialVersionUID = 1L;

    LeaseRefusedException(String message) {
        super(message);
    }
}
