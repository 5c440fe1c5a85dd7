package io.flinkdevices.testkit.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.example.acmeyarn.AcmeYarnResources;
import io.flinkdevices.example.mutants.AcmeFakeFallback;
import io.flinkdevices.example.mutants.AcmeSmiByProcessBuilder;
import io.flinkdevices.example.mutants.AcmeStickProperties;
import io.flinkdevices.example.mutants.OpenAcmeFactory;
import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The mutation run: the bugs real drivers have had, planted in the example driver one at a time,
 * and what the kit (the contract kit and the architecture rules) says about each. A bug is caught
 * when at least one case fails; the unmutated driver must pass every case, so a catch is never a
 * broken environment. Writes the table to {@code target/mutation-run.md}; docs/driver-authors.md
 * shows it.
 */
@DisplayName("The mutation run: the kit catches every bug planted in the example driver")
class AcmeMutationITCase {

    /** The system property the example's {@code Mutant} reads. */
    private static final String PROPERTY = "flinkdevices.example.mutant";

    /** Bugs planted through the property, with what each does. */
    private static final Map<String, String> PLANTED = new LinkedHashMap<>();

    static {
        PLANTED.put("more-infos-than-asked", "returns amount + 1 infos");
        PLANTED.put("fewer-than-asked", "returns fewer infos than asked instead of failing");
        PLANTED.put("zero-amount-accepted", "accepts amount 0");
        PLANTED.put("duplicates-accepted", "lists a device twice when the tool repeats it");
        PLANTED.put("error-out-of-retrieval", "throws an AssertionError (an Error) on an odd tool line");
        PLANTED.put("unknown-keys-accepted", "declares every configured key known, so typos pass");
        PLANTED.put("vague-errors", "errors name the key without its external-resource.<name>.param. prefix");
        PLANTED.put("keys-without-values", "an info key whose value is empty");
        PLANTED.put("mutable-keys", "getKeys() hands out the info's own mutable set");
        PLANTED.put("same-visible-value", "every info has the same visible-devices value");
        PLANTED.put("visible-devices-ignored", "ignores the host's ACME_VISIBLE_DEVICES");
        PLANTED.put("coordination-ignored", "never records devices: two TaskManagers share one");
        PLANTED.put("coordination-leak", "takes devices one at a time: a failed allocation leaves some recorded");
        PLANTED.put("timeout-ignored", "runs the tool with a one-hour timeout, whatever is configured");
        PLANTED.put("short-timeout", "runs the tool with 0.5 s, whatever is configured");
        PLANTED.put("process-builder-no-timeout", "runs the tool through ProcessBuilder with no timeout");
        PLANTED.put("listing-cached", "keeps the tool's first answer for good");
        PLANTED.put("bad-kubernetes-name", "a Kubernetes resource name Kubernetes refuses");
        PLANTED.put("undeclared-yarn-decorator", "a Yarn decorator the kit was not told about");
        PLANTED.put("keys-listed-without-value", "getKeys() lists memory, PCI address and health also on a stick whose tool line has none of them");
        PLANTED.put("duplicates-handed-out", "numbers sticks by their place in the listing, so a stick the tool lists twice is handed out twice");
        PLANTED.put("mutable-decorator-map", "kubernetesResources returns a HashMap any caller can change");
        PLANTED.put("missing-param-npe", "reads acme-smi.path unchecked: absent, it is a NullPointerException");
        PLANTED.put("exit-code-ignored", "parses the tool's output whatever its exit code");
        PLANTED.put("stderr-dropped", "the error for a failing tool gives its exit code but not what it printed on stderr");
        PLANTED.put("parser-exception-escapes", "an odd tool line reaches a JSON parser whose own exception escapes");
        PLANTED.put("silent-handout", "logs nothing about the sticks it hands out");
        PLANTED.put("failed-handed-out", "hands out a stick the tool reports failed");
        PLANTED.put("truncation-ignored", "parses a listing ExternalCommand cut off at its stdout limit");
        PLANTED.put("close-keeps-records", "close() does nothing: the sticks stay recorded while the driver is referenced");
    }

    /**
     * Bugs planted as classes of their own, in packages beside the driver's: only the
     * architecture rules can see them, checked as the archetype's generated test checks them
     * ({@code DriverArchitectureRules.checkPlugin}: every class of the plugin, whatever its
     * package), here on the driver's package plus the planted class.
     */
    private static final Map<Class<?>, String> PLANTED_CLASSES = new LinkedHashMap<>();

    static {
        PLANTED_CLASSES.put(AcmeStickProperties.class, "uses io.flinkdevices.sdk.internal classes");
        PLANTED_CLASSES.put(AcmeSmiByProcessBuilder.class, "starts the tool with ProcessBuilder");
        PLANTED_CLASSES.put(AcmeFakeFallback.class, "production code that uses the testkit's fake host");
        PLANTED_CLASSES.put(OpenAcmeFactory.class, "a factory Flink's ServiceLoader cannot create");
        PLANTED_CLASSES.put(AcmeYarnResources.class, "a helper in a sibling package of the driver that uses Hadoop and an sdk-api internal class");
    }

    private record Row(String bug, String what, int failed, String firstCase) {}

    @Test
    @DisplayName("every planted bug fails at least one case of the kit, and the correct driver fails none")
    void everyBugIsCaught() throws IOException {
        assertThat(PLANTED.keySet())
                .as("the bugs Mutant can plant (every Mutant.on(...) in the example's sources)")
                .containsExactlyInAnyOrderElementsOf(plantable());

        Row control = runKit(null, "the correct driver");
        assertThat(control.failed()).as("cases the unmutated driver fails: %s", control.firstCase()).isZero();
        assertThat(checkArchitecture(AcmeTensorStickDriverFactory.class, "the correct driver").failed())
                .as("architecture violations of the unmutated driver")
                .isZero();

        List<Row> rows = new ArrayList<>();
        PLANTED.forEach((bug, what) -> rows.add(runKit(bug, what)));
        PLANTED_CLASSES.forEach((type, what) -> rows.add(checkArchitecture(type, what)));

        String table = table(rows);
        System.out.println(table);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target/mutation-run.md"), table);
        assertThat(rows).filteredOn(r -> r.failed() == 0).as("bugs the kit missed").isEmpty();
    }

    @Test
    @DisplayName("a close() that keeps the coordination records fails the lifecycle case, whose message names that first")
    void closeKeepingRecordsIsNamed() {
        List<Failure> failures = failures("close-keeps-records");
        assertThat(failures).extracting(Failure::method).as("cases failed by a close() that does nothing")
                .containsExactly("closeEndsEverything");
        assertThat(failures.get(0).message())
                .startsWith("close() kept the coordination records: a new driver could not take the 2 devices");
    }

    private static Row runKit(String bug, String what) {
        List<Failure> failed = failures(bug);
        return new Row(bug == null ? "(none)" : bug, what, failed.size(), failed.isEmpty() ? "" : failed.get(0).displayName());
    }

    private record Failure(String method, String displayName, String message) {}

    /** The kit's failed cases with {@code bug} planted (none when null), in the order they ran. */
    private static List<Failure> failures(String bug) {
        if (bug == null) {
            System.clearProperty(PROPERTY);
        } else {
            System.setProperty(PROPERTY, bug);
        }
        List<Failure> failed = new ArrayList<>();
        try {
            Launcher launcher = LauncherFactory.create();
            launcher.execute(
                    LauncherDiscoveryRequestBuilder.request().selectors(selectClass(AcmeDriverContractITCase.class)).build(),
                    new TestExecutionListener() {
                        @Override
                        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                            if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED) {
                                String method = id.getUniqueId().replaceAll(".*\\[method:([^(]+)\\(.*", "$1");
                                failed.add(new Failure(method, id.getDisplayName(), result.getThrowable().map(Throwable::getMessage).orElse("")));
                            }
                        }
                    });
        } finally {
            System.clearProperty(PROPERTY);
        }
        return failed;
    }

    private static Row checkArchitecture(Class<?> type, String what) {
        JavaClasses plugin =
                new ClassFileImporter()
                        .importClasses(
                                Stream.concat(
                                                new ClassFileImporter()
                                                        .importPackages(AcmeTensorStickDriverFactory.class.getPackageName())
                                                        .stream()
                                                        .map(c -> c.reflect()),
                                                Stream.of(type))
                                        .toArray(Class<?>[]::new));
        try {
            DriverArchitectureRules.check(AcmeTensorStickDriverFactory.class, plugin);
            return new Row(type.getSimpleName(), what, 0, "");
        } catch (AssertionError e) {
            // the first line names the first broken rule, why, and its first violation
            return new Row(type.getSimpleName(), what, 1, "architecture rule: " + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    private static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%d bugs planted, %d caught%n%n", rows.size(), rows.stream().filter(r -> r.failed() > 0).count()));
        sb.append("| planted bug | what it does | cases failed | first failing case |\n|---|---|---|---|\n");
        for (Row r : rows) {
            sb.append("| `").append(r.bug()).append("` | ").append(r.what()).append(" | ").append(r.failed())
                    .append(" | ").append(shorten(r.firstCase())).append(" |\n");
        }
        return sb.toString();
    }

    private static String shorten(String s) {
        String one = s.replace('|', '/').replace('\n', ' ');
        return one.length() > 140 ? one.substring(0, 137) + "..." : one;
    }

    /** Every name the example's sources pass to {@code Mutant.on}. */
    private static TreeSet<String> plantable() throws IOException {
        TreeSet<String> names = new TreeSet<>();
        Pattern on = Pattern.compile("\\bon\\(\"([a-z-]+)\"\\)");
        try (Stream<Path> files = Files.list(Path.of("src/test/java/io/flinkdevices/example/acme"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Matcher m = on.matcher(Files.readString(f));
                while (m.find()) {
                    names.add(m.group(1));
                }
            }
        }
        return names;
    }
}
