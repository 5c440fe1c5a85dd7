package io.flinkdevices.sdk.coordination.internal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ProcStatTest {

    private static ProcStat.Read parse(String line) {
        byte[] b = line.getBytes(StandardCharsets.ISO_8859_1);
        return ProcStat.parse(b, b.length);
    }

    @Test
    @DisplayName("a stat line is read after the last ')' of the command name, which may hold ') ' itself")
    void commandNameWithParenthesis() {
        ProcStat.Read r =
                parse("4711 (evil) R 1 2 3) S 1 4711 4711 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10\n");
        assertThat(r).isNotNull();
        assertThat(r.state).isEqualTo('S');
        assertThat(r.flags).isEqualTo(4194560L);
        assertThat(r.startTicks).isEqualTo(123456L);
    }

    @Test
    @DisplayName("a line with too few fields, or fields that are not numbers, is not believed")
    void damaged() {
        assertThat(parse("4711 (x) S 1 4711 4711 0 -1 4194560 10 0")).isNull();
        assertThat(parse("4711 (x) S 1 4711 4711 0 -1 41x4560 10 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10")).isNull();
        assertThat(parse("4711 (x) S 1 4711 4711 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 99999999999999999999 1")).isNull();
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    @DisplayName("the file kept open for an owner tells its exit: the next look finds it gone, not the kept view")
    void keptFileSeesExit() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            String first = ProcessIdentity.startToken(sleeper.pid()).orElseThrow();
            assertThat(ProcessIdentity.startToken(sleeper.pid())).contains(first);
        } finally {
            sleeper.destroyForcibly();
            sleeper.waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(ProcessIdentity.startToken(sleeper.pid())).isEmpty();
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    @DisplayName("this process reads as running, with the start token it records")
    void self() {
        ProcessIdentity self = ProcessIdentity.current();
        assertThat(ProcessIdentity.startToken(self.pid())).contains(self.start());
        assertThat(ProcessIdentity.startToken(self.pid())).contains(self.start());
    }
}
