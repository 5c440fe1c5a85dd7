package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/** A vendor tool's JSON and CSV read into checked fields, every failure naming tool, field and device. */
@DisplayName("ToolOutput")
class ToolOutputTest {

    private static final String TOOL = "hexa-smi list --json (external-resource.hexa.param.hexa-smi.path)";

    private static final String CARDS = "{\"cards\": [\n"
            + "  {\"index\": 0, \"serial\": \"HX-0001\", \"memory\": {\"total_bytes\": 17179869184}, \"numa_node\": 1,"
            + " \"temperature\": \"41.5\", \"name\": \"Hexa \\\"One\\\" \\u00e9\"},\n"
            + "  {\"index\": \"1\", \"serial\": \"HX-0002\", \"memory\": {\"total_bytes\": 8589934592}, \"numa_node\": \"N/A\","
            + " \"temperature\": null, \"vram.size\": \"7 GB\"}\n"
            + "]}";

    @Nested
    @DisplayName("JSON")
    class Json {

        @Test
        @DisplayName("fields are read by key and dotted path; N/A, null and missing are unknown")
        void readsFields() throws Exception {
            List<ToolRecord> cards = ToolOutput.json(TOOL, CARDS).list("cards");
            assertThat(cards).hasSize(2);
            ToolRecord first = cards.get(0);
            assertThat(first.whole("index", 0, 1023)).isZero();
            assertThat(first.identifier("serial")).isEqualTo("HX-0001");
            assertThat(first.whole("memory.total_bytes", 0, HostValues.MAX_MEMORY_BYTES)).isEqualTo(17179869184L);
            assertThat(first.optionalWhole("numa_node", 0, 1023)).hasValue(1);
            assertThat(first.number("temperature", 0, HostValues.MAX_CELSIUS, "°C")).isEqualTo(41.5);
            assertThat(first.text("name")).isEqualTo("Hexa \"One\" é");
            assertThat(first.isObject("memory")).isTrue();
            assertThat(first.fields()).containsExactly("index", "serial", "memory", "numa_node", "temperature", "name");

            ToolRecord second = cards.get(1);
            assertThat(second.whole("index", 0, 1023)).isEqualTo(1); // a number printed as text
            assertThat(second.optionalWhole("numa_node", 0, 1023)).isEqualTo(OptionalLong.empty());
            assertThat(second.optionalNumber("temperature", 0, 200, "°C")).isEmpty();
            assertThat(second.optionalText("uuid")).isEmpty();
            assertThat(second.has("numa_node")).isFalse();
            assertThat(second.has("serial")).isTrue();
            assertThat(second.text("vram.size")).as("a key with a dot is found as it is").isEqualTo("7 GB");
        }

        @Test
        @DisplayName("a bad field names the tool, the field, the device and what was expected")
        void badFieldNamesToolFieldDevice() throws Exception {
            ToolRecord card = ToolOutput.json(TOOL, CARDS).list("cards").get(1);
            assertThatThrownBy(() -> card.forDevice("card 1").whole("vram.size", 0, HostValues.MAX_MEMORY_BYTES))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(TOOL + ": vram.size of card 1 is '7 GB'; expected a whole number from 0 to 1125899906842624");
            assertThatThrownBy(() -> card.whole("numa_node", 0, 1023))
                    .hasMessage(TOOL + ": numa_node of cards[1] is 'N/A'; expected a whole number from 0 to 1023");
            assertThatThrownBy(() -> card.forDevice("card 1").text("uuid"))
                    .hasMessage(TOOL + ": card 1 has no field uuid (it has index, serial, memory, numa_node, temperature, vram.size);"
                            + " expected a text");
            assertThatThrownBy(() -> card.text("memory"))
                    .hasMessage(TOOL + ": memory of cards[1] is an object; expected a text");
            assertThatThrownBy(() -> card.number("temperature", 0, 200, "°C"))
                    .hasMessage(TOOL + ": temperature of cards[1] is 'null'; expected a number from 0 to 200 °C");
        }

        @ParameterizedTest(name = "{0}")
        @CsvSource(delimiter = '|', value = {
            "negative index      | {\"index\": -1}    | index of entry 0 is '-1'; expected a whole number from 0 to 1023",
            "fraction            | {\"index\": 1.5}   | index of entry 0 is '1.5'; expected a whole number from 0 to 1023",
            "beyond a long       | {\"index\": 99999999999999999999} | index of entry 0 is '99999999999999999999'; expected a whole number",
            "a list              | {\"index\": [1]}   | index of entry 0 is a list; expected a text",
            "true                | {\"index\": true}  | index of entry 0 is 'true'; expected a whole number",
        })
        @DisplayName("numbers out of range, fractions, lists and words are refused")
        void badWholeNumbers(String name, String entry, String message) throws Exception {
            ToolRecord e = ToolOutput.json(TOOL, "[" + entry + "]").elements().get(0);
            assertThatThrownBy(() -> e.whole("index", 0, 1023)).hasMessageStartingWith(TOOL + ": " + message);
        }

        @Test
        @DisplayName("the entries of an object are named by their keys")
        void entries() throws Exception {
            Map<String, ToolRecord> cards = ToolOutput.json(TOOL, "{\"card0\": {\"PCI Bus\": \"0000:03:00.0\"}, \"system\": {}}").entries();
            assertThat(cards).containsOnlyKeys("card0", "system");
            assertThat(cards.get("card0").text("PCI Bus")).isEqualTo("0000:03:00.0");
            assertThatThrownBy(() -> cards.get("system").text("PCI Bus")).hasMessageStartingWith(TOOL + ": system has no field PCI Bus (it has no fields)");
        }

        @ParameterizedTest(name = "{0}")
        @CsvSource(delimiter = '|', value = {
            "truncated             | {\"cards\": [{\"index\": 0  | printed JSON that cannot be read (expected ',' or '}', found the end of the text at line 1, column 23); expected a whole JSON document (truncated output?)",
            "not JSON              | GPU 0 is fine                | printed JSON that cannot be read (unexpected 'G' at line 1, column 1)",
            "trailing garbage      | {}  }} garbage               | printed more after its JSON document (at line 1, column 5: '}} garbage'); expected one JSON document and nothing after it",
            "a field twice         | {\"a\": 1, \"a\": 2}         | printed JSON that cannot be read (the field \"a\" appears twice in one object at line 1, column 10)",
            "a bare word           | {\"a\": nul}                 | printed JSON that cannot be read (unexpected 'nul}' at line 1, column 7)",
            "a leading zero        | [01]                         | printed JSON that cannot be read (a malformed number '01'",
            "a raw line feed       | \"a\u0001b\"                 | printed JSON that cannot be read (a control character U+0001 inside a string",
            "only blanks           | '   '                        | printed no JSON; expected a JSON document",
        })
        @DisplayName("broken, truncated and doubled output is refused with where and what was expected")
        void brokenDocuments(String name, String text, String message) {
            assertThatThrownBy(() -> ToolOutput.json(TOOL, text))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageStartingWith(TOOL + " " + message);
        }

        @Test
        @DisplayName("nesting and size are bounded: a hostile tool cannot exhaust the stack or the heap")
        void bounded() {
            String deep = "[".repeat(100_000) + "]".repeat(100_000);
            assertThatThrownBy(() -> ToolOutput.json(TOOL, deep))
                    .hasMessage(TOOL + " printed JSON that cannot be read (nesting depth above 64 at line 1, column 65);"
                            + " expected at most 64 levels of objects and lists");
            String huge = "\"" + "x".repeat(ToolOutput.MAX_CHARS) + "\"";
            assertThatThrownBy(() -> ToolOutput.json(TOOL, huge))
                    .hasMessage(TOOL + " printed " + huge.length() + " characters of JSON; expected at most 4194304 (a short document per device)");
        }

        @Test
        @DisplayName("any garbage (truncations of real output, random JSON-like text) is read or refused with a DeviceDriverException, never another exception")
        void garbageOnlyEverRefused() {
            java.util.Random random = new java.util.Random(42);
            String alphabet = "{}[]\",:.-+eE0123456789 \n\\/tfnrulasu";
            List<String> inputs = new java.util.ArrayList<>();
            for (int cut = 0; cut <= CARDS.length(); cut++) {
                inputs.add(CARDS.substring(0, cut));
            }
            for (int n = 0; n < 5000; n++) {
                StringBuilder b = new StringBuilder();
                for (int i = random.nextInt(40); i > 0; i--) {
                    b.append(alphabet.charAt(random.nextInt(alphabet.length())));
                }
                inputs.add(b.toString());
            }
            for (String text : inputs) {
                try {
                    ToolRecord root = ToolOutput.json(TOOL, text);
                    root.optionalText("a.b"); // reading any field of any shape is checked, too
                } catch (DeviceDriverException e) {
                    assertThat(e.getMessage()).as("for input '%s'", text).startsWith(TOOL);
                } catch (RuntimeException e) {
                    throw new AssertionError("input '" + text + "' threw " + e, e);
                }
            }
        }

        @Test
        @DisplayName("64 levels are read")
        void deepestAccepted() throws Exception {
            String ok = "[".repeat(63) + "{\"a\": 1}" + "]".repeat(63);
            assertThat(ToolOutput.json(TOOL, ok).isList()).isTrue();
        }
    }

    @Nested
    @DisplayName("CSV")
    class Csv {

        private static final String SMI = "nvidia-smi --query-gpu=index,uuid,memory.total --format=csv,noheader,nounits";

        @Test
        @DisplayName("lines become records of the columns; blanks, CR LF and quoted commas are read")
        void readsLines() throws Exception {
            List<ToolRecord> rows = ToolOutput.csv(SMI, "0, GPU-a, 81559\r\n\r\n1, \"GPU, b\", [N/A]\r\n",
                    List.of("index", "uuid", "memory.total"));
            assertThat(rows).hasSize(2);
            assertThat(rows.get(0).whole("index", 0, 1023)).isZero();
            assertThat(rows.get(0).whole("memory.total", 0, 1L << 30)).isEqualTo(81559);
            assertThat(rows.get(1).text("uuid")).isEqualTo("GPU, b");
            assertThat(rows.get(1).optionalWhole("memory.total", 0, 1L << 30)).isEmpty();
            assertThatThrownBy(() -> rows.get(1).forDevice("GPU 1").identifier("uuid"))
                    .hasMessageStartingWith(SMI + ": uuid of GPU 1 is 'GPU, b'; expected an identifier");
            assertThatThrownBy(() -> rows.get(1).whole("memory.total", 0, 1L << 30))
                    .hasMessage(SMI + ": memory.total of line 3 is '[N/A]'; expected a whole number from 0 to 1073741824");
        }

        @Test
        @DisplayName("a header line names the columns")
        void header() throws Exception {
            List<ToolRecord> rows = ToolOutput.csvWithHeader("nvidia-smi", "index, memory.total [MiB]\n0, 81559\n");
            assertThat(rows.get(0).whole("memory.total [MiB]", 0, 1L << 30)).isEqualTo(81559);
            assertThatThrownBy(() -> ToolOutput.csvWithHeader("nvidia-smi", "index, index\n0, 1\n"))
                    .hasMessage("nvidia-smi printed a header line 1 'index, index'; expected 1 to 256 distinct, non-empty column names"
                            + " separated by commas");
            assertThatThrownBy(() -> ToolOutput.csvWithHeader("nvidia-smi", "\n\n"))
                    .hasMessageStartingWith("nvidia-smi printed no CSV header line");
        }

        @Test
        @DisplayName("a line with too few or too many fields, or an open quote, names the line and the columns")
        void wrongFieldCount() {
            List<String> columns = List.of("index", "uuid", "memory.total");
            assertThatThrownBy(() -> ToolOutput.csv(SMI, "0, GPU-a, 81559\n1, GPU-b\n", columns))
                    .hasMessage(SMI + " printed an unexpected line 2: '1, GPU-b'; expected 3 comma-separated fields"
                            + " (index, uuid, memory.total) but found 2 (truncated output?)");
            assertThatThrownBy(() -> ToolOutput.csv(SMI, "0, GPU-a, 1, 2\n", columns))
                    .hasMessageEndingWith("but found 4");
            assertThatThrownBy(() -> ToolOutput.csv(SMI, "0, \"GPU-a, 1\n", columns))
                    .hasMessageEndingWith("but a double quote is not closed");
        }

        @Test
        @DisplayName("a driver that reads the lines itself gets one line as a record, named as it says")
        void oneLine() throws Exception {
            ToolRecord row = ToolOutput.csvLine(SMI, "line 4", " 3, GPU-d, [Not Supported] ", List.of("index", "uuid", "memory.total"));
            assertThat(row.device()).isEqualTo("line 4");
            assertThat(row.whole("index", 0, 1023)).isEqualTo(3);
            assertThat(row.has("memory.total")).isFalse();
            assertThatThrownBy(() -> ToolOutput.csvLine(SMI, "line 4", "3", List.of("index", "uuid")))
                    .hasMessage(SMI + " printed an unexpected line 4: '3'; expected 2 comma-separated fields (index, uuid) but found 1"
                            + " (truncated output?)");
        }
    }
}
