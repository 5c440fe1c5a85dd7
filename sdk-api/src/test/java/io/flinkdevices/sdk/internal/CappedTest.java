package io.flinkdevices.sdk.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CappedTest {

    @Test
    @DisplayName("a long text keeps its first characters and says how many were cut; a short one is unchanged")
    void caps() {
        assertThat(Capped.text("Insufficient Permissions")).isEqualTo("Insufficient Permissions");
        assertThat(Capped.text("x".repeat(1 << 20))).isEqualTo("x".repeat(200) + "… (1048376 more characters)");
        assertThat(Capped.text(null)).isNull();
    }

    @Test
    @DisplayName("a text capped before is not cut again, and a surrogate pair is never split")
    void idempotentAndWhole() {
        String once = Capped.text("y".repeat(5000));
        assertThat(Capped.text(once)).isEqualTo(once);
        String emoji = "a".repeat(199) + "\uD83D\uDE00" + "b".repeat(10);
        assertThat(Capped.text(emoji)).isEqualTo("a".repeat(199) + "… (12 more characters)");
    }

    @Test
    @DisplayName("a value with a character that does not look like itself names it")
    void visible() {
        assertThat(Visible.quoted("10 s")).isEqualTo("'10 s'");
        assertThat(Visible.quoted("10\u00a0s"))
                .isEqualTo("'10\u00a0s' (character 3 is U+00A0 NO-BREAK SPACE, which looks like a plain space but is not one)");
        assertThat(Visible.quoted("1\u200b0 s")).endsWith("(character 2 is U+200B ZERO WIDTH SPACE, which does not show)");
        assertThat(Visible.quoted("10 \u00b5s")).endsWith("(character 4 is U+00B5 MICRO SIGN, not plain ASCII)");
    }
}
