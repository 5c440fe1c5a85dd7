package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.ResourceSetting;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalResourceOptions;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code flink.apache.org/v1beta1 FlinkDeployment} for the Flink Kubernetes Operator, built from
 * what {@link KubernetesRender} renders for native Kubernetes: the drivers' Flink settings go under
 * {@code spec.flinkConfiguration}, the TaskManager pod template under {@code
 * spec.taskManager.podTemplate}.
 *
 * <p>The operator writes the Flink configuration of the cluster from {@code flinkConfiguration}
 * (and its own defaults), not from a {@code config.yaml} of the image, so the deployment carries
 * the whole {@code external-resources} setup, not only the lines {@code render kubernetes} says to
 * add.
 */
public final class FlinkOperatorRender {

    /** The API version of the operator's {@code FlinkDeployment} resource. */
    public static final String API_VERSION = "flink.apache.org/v1beta1";

    /**
     * The last operator release whose CRD has only the pre-GA DRA fields of a pod ({@code
     * resourceClaims[].source}, container {@code resources.claims[].name}): the API server prunes
     * {@code resourceClaims[].resourceClaimTemplateName} and {@code resources.claims[].request} from
     * its pod templates.
     */
    public static final String LAST_PRUNING_OPERATOR = "1.12.1";

    /** The first operator release whose CRD keeps the GA DRA fields of a pod. */
    public static final String FIRST_KEEPING_OPERATOR = "1.13.0";

    /** Memory of the JobManager process when the Flink configuration sets none (Flink's default config.yaml). */
    static final String DEFAULT_JOBMANAGER_MEMORY = "1600m";

    /** Memory of a TaskManager process when the Flink configuration sets none (Flink's default config.yaml). */
    static final String DEFAULT_TASKMANAGER_MEMORY = "1728m";

    private static final String JOBMANAGER_MEMORY = "jobmanager.memory.process.size";
    private static final String TASKMANAGER_MEMORY = "taskmanager.memory.process.size";

    /** The operator's rule for a FlinkDeployment's name (its {@code DefaultValidator}). */
    private static final Pattern NAME = Pattern.compile("[a-z]([-a-z\\d]{0,43}[a-z\\d])?");

    private static final Pattern OPERATOR_VERSION = Pattern.compile("v\\d+_\\d+");

    /**
     * The {@code spec.flinkVersion} values the newest operator's CRD accepts (its enum; the API
     * server refuses any other), oldest first. {@code
     * FlinkOperatorRenderTest.flinkVersionsFollowTheCrd} holds this list equal to the enum of
     * operator 1.15.0's CRD.
     */
    public static final List<String> CRD_FLINK_VERSIONS =
            List.of(
                    "v1_13", "v1_14", "v1_15", "v1_16", "v1_17", "v1_18", "v1_19", "v1_20", "v2_0",
                    "v2_1", "v2_2");

    /** The operator release whose CRD {@link #CRD_FLINK_VERSIONS} is taken from. */
    public static final String CRD_OPERATOR = "1.15.0";

    /**
     * An image reference as container runtimes parse it ({@code distribution/reference}):
     * {@code [host[:port]/]path[:tag][@digest]}, path components in lower case.
     */
    private static final Pattern IMAGE;

    static {
        String domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        String domain = domainComponent + "(?:\\." + domainComponent + ")*(?::[0-9]+)?";
        String pathComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
        String tag = "[\\w][\\w.-]{0,127}";
        String digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
        IMAGE = Pattern.compile(
                "(?:" + domain + "/)?" + pathComponent + "(?:/" + pathComponent + ")*"
                        + "(?::" + tag + ")?(?:@" + digest + ")?");
    }

    /** A Kubernetes object name (DNS-1123 subdomain), as a service account's name must be. */
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern FLINK_VERSION = Pattern.compile("(\\d+)\\.(\\d+)(\\.\\d+)?");

    /** A pod-spec or container key of DRA: {@code resourceClaims:} or {@code claims:}. */
    private static final Pattern CLAIMS = Pattern.compile("(?m)^\\s*(-\\s+)?(resourceClaims|claims)\\s*:");

    private FlinkOperatorRender() {}

    /**
     * What a FlinkDeployment names besides the drivers' settings.
     *
     * @param name {@code metadata.name}, also the Flink cluster id
     * @param image the Flink image, which must carry the drivers' plugin folders
     * @param flinkVersion the operator's {@code FlinkVersion} value, e.g. {@code v1_20}
     * @param serviceAccount the service account the JobManager creates TaskManager pods with
     */
    public record Options(String name, String image, String flinkVersion, String serviceAccount) {

        /**
         * @throws IllegalArgumentException naming the option and what it expects
         */
        public Options {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(
                        "--name: '"
                                + name
                                + "' is not a FlinkDeployment name the operator accepts: lower case letters,"
                                + " digits and '-', starting with a letter, ending with a letter or digit, at"
                                + " most 45 characters");
            }
            if (image.isBlank()) {
                throw new IllegalArgumentException("--image: empty, expected a Flink image with the drivers' plugins");
            }
            if (image.length() > 255 || !IMAGE.matcher(image).matches()) {
                throw new IllegalArgumentException(
                        "--image: '"
                                + printable(image)
                                + "' is not an image reference; expected"
                                + " [registry[:port]/]name[:tag][@digest] with a lower-case name and"
                                + " no spaces, such as example.com/flink-devices:2.2");
            }
            if (!OPERATOR_VERSION.matcher(flinkVersion).matches()) {
                throw new IllegalArgumentException(
                        "--flink-version: '" + flinkVersion + "' is no FlinkVersion value such as v1_20");
            }
            if (!CRD_FLINK_VERSIONS.contains(flinkVersion)) {
                throw new IllegalArgumentException(
                        "--flink-version: "
                                + flinkVersion
                                + " is not a FlinkVersion of the operator's CRD, so the API server"
                                + " refuses the FlinkDeployment; operator "
                                + CRD_OPERATOR
                                + " knows "
                                + String.join(", ", CRD_FLINK_VERSIONS));
            }
            if (serviceAccount.isBlank()) {
                throw new IllegalArgumentException("--service-account: empty");
            }
            if (serviceAccount.length() > 253 || !DNS_SUBDOMAIN.matcher(serviceAccount).matches()) {
                throw new IllegalArgumentException(
                        "--service-account: '"
                                + printable(serviceAccount)
                                + "' is not a service account name Kubernetes accepts: lower case"
                                + " letters, digits, '-' and '.', starting and ending with a letter"
                                + " or digit, at most 253 characters");
            }
        }
    }

    /** {@code text} with control characters (a newline) written as {@code \\n}, {@code \\uXXXX}. */
    static String printable(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n') {
                sb.append("\\n");
            } else if (c == '\t') {
                sb.append("\\t");
            } else if (Character.isISOControl(c)) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /**
     * The operator's {@code FlinkVersion} value for {@code text}: itself when it is one ({@code
     * v1_20}), else the major and minor of a Flink version ({@code 1.20}, {@code 2.0.1}).
     *
     * @throws IllegalArgumentException when {@code text} is neither
     */
    public static String flinkVersion(String text) {
        String t = text.strip();
        if (OPERATOR_VERSION.matcher(t).matches()) {
            return t;
        }
        Matcher m = FLINK_VERSION.matcher(t);
        if (m.matches()) {
            return "v" + m.group(1) + "_" + m.group(2);
        }
        throw new IllegalArgumentException(
                "'" + text + "' is neither the operator's FlinkVersion (v1_20) nor a Flink version (1.20, 2.0.1)");
    }

    /**
     * {@code spec.flinkConfiguration}: every {@code external-resources} and {@code
     * external-resource.<name>.*} setting of {@code config} for the listed resources, less the keys
     * {@code kubernetes} says to remove, plus its config lines; sorted by key.
     */
    public static Map<String, String> flinkConfiguration(Configuration config, Rendered kubernetes) {
        Map<String, String> all = config.toMap();
        Map<String, String> out = new TreeMap<>();
        List<ResourceSetting> resources = ResourceSetting.readAll(config);
        if (all.containsKey(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key())) {
            out.put(
                    ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key(),
                    all.get(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key()));
        }
        for (ResourceSetting r : resources) {
            // Flink's ExternalResourceOptions keeps this prefix private
            String prefix = "external-resource." + r.name() + ".";
            all.forEach(
                    (k, v) -> {
                        if (k.startsWith(prefix)) {
                            out.put(k, v);
                        }
                    });
        }
        kubernetes.configRemovals().keySet().forEach(out::remove);
        out.putAll(kubernetes.configLines());
        return out;
    }

    /**
     * The FlinkDeployment document, without a leading {@code ---}.
     *
     * @param flinkConfiguration from {@link #flinkConfiguration}
     * @param config the Flink configuration, for the JobManager and TaskManager memory
     * @param podTemplate the TaskManager pod template {@link KubernetesRender} rendered
     */
    public static String deployment(
            Options options, Map<String, String> flinkConfiguration, Configuration config, String podTemplate) {
        StringBuilder y = new StringBuilder();
        y.append("apiVersion: ").append(API_VERSION).append('\n');
        y.append("kind: FlinkDeployment\n");
        y.append("metadata:\n");
        y.append("  name: ").append(Yaml.quote(options.name())).append('\n');
        y.append("spec:\n");
        y.append("  image: ").append(Yaml.quote(options.image())).append('\n');
        y.append("  flinkVersion: ").append(options.flinkVersion()).append('\n');
        y.append("  serviceAccount: ").append(Yaml.quote(options.serviceAccount())).append('\n');
        if (!flinkConfiguration.isEmpty()) {
            y.append("  flinkConfiguration:\n");
            flinkConfiguration.forEach(
                    (k, v) -> y.append("    ").append(Yaml.quote(k)).append(": ").append(Yaml.quote(v)).append('\n'));
        }
        y.append("  jobManager:\n");
        y.append("    resource:\n");
        y.append("      memory: ")
                .append(Yaml.quote(config.getString(JOBMANAGER_MEMORY, DEFAULT_JOBMANAGER_MEMORY)))
                .append('\n');
        y.append("  taskManager:\n");
        y.append("    resource:\n");
        y.append("      memory: ")
                .append(Yaml.quote(config.getString(TASKMANAGER_MEMORY, DEFAULT_TASKMANAGER_MEMORY)))
                .append('\n');
        y.append("    podTemplate:\n");
        podTemplate.lines().forEach(l -> y.append(l.isEmpty() ? "" : "      ").append(l).append('\n'));
        return y.toString();
    }

    /**
     * The warning for a pod template with DRA claims: operators up to {@link #LAST_PRUNING_OPERATOR}
     * drop them without a word.
     */
    public static Optional<String> claimsWarning(String podTemplate) {
        if (!CLAIMS.matcher(podTemplate).find()) {
            return Optional.empty();
        }
        return Optional.of(
                "the TaskManager pod template carries resource claims (DRA): the FlinkDeployment CRD of Flink"
                        + " Kubernetes Operator "
                        + LAST_PRUNING_OPERATOR
                        + " and older knows only the pre-GA fields, so the API server drops"
                        + " spec.resourceClaims[].resourceClaimTemplateName and resources.claims[].request"
                        + " from the template without an error and the TaskManagers start without those"
                        + " devices; use operator "
                        + FIRST_KEEPING_OPERATOR
                        + " or newer, and replace its CRD when upgrading (helm upgrade leaves CRDs as they"
                        + " are)");
    }

    /** The header comments of the output, one per line, without {@code #}. */
    static List<String> header(String pluginsDir) {
        return List.of(
                "FlinkDeployment for the Flink Kubernetes Operator: kubectl apply -f FILE",
                "the image must carry the drivers' plugin folders in /opt/flink/plugins, as "
                        + pluginsDir
                        + " does here",
                "a session cluster: add spec.job (jarURI, parallelism, upgradeMode) for an application");
    }
}
