package io.flinkdevices.testkit.host;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

class HostLibrariesTest {

    @Test
    @DisplayName("the C library every Linux host has is found as a regular file")
    void findsLibc() {
        assertThat(HostLibraries.find("libc.so.6"))
                .isNotEmpty()
                .allSatisfy(p -> assertThat(Files.isRegularFile(p)).isTrue());
        assertThat(HostLibraries.present("libc.so.6")).isTrue();
    }

    @Test
    @DisplayName("a library no host has is absent")
    void absentLibrary() {
        assertThat(HostLibraries.find("libflink-devices-no-such-library.so.7")).isEmpty();
        assertThat(HostLibraries.present("libflink-devices-no-such-library.so.7")).isFalse();
    }

    @Test
    @DisplayName("results are real paths without duplicates")
    void realPathsOnce() throws Exception {
        for (Path p : HostLibraries.find("libc.so.6")) {
            assertThat(p).isEqualTo(p.toRealPath());
        }
        assertThat(HostLibraries.find("libc.so.6")).doesNotHaveDuplicates();
    }
}
