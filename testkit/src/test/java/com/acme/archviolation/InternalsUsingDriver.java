package com.acme.archviolation;

import io.flinkdevices.sdk.internal.NearMiss;

import java.util.List;
import java.util.Optional;

/** A third-party driver class (outside io.flinkdevices) that uses sdk-api internals. */
final class InternalsUsingDriver {

    private InternalsUsingDriver() {}

    static Optional<String> suggest(String key) {
        return NearMiss.closest(key, List.of("backend", "timeout"), 3);
    }
}
