package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.internal.FakeFiles;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every suite of the kit shares: the kit's hooks, a temporary folder per case for fake hosts,
 * and calling the factory and driver the way Flink does.
 */
@Timeout(120)
abstract class ContractSuite {

    /** The kit whose hooks describe the driver under test. */
    final DriverContractKit kit;

    private Path tempRoot;
    private int hosts;

    ContractSuite(DriverContractKit kit) {
        this.kit = kit;
    }

    @BeforeEach
    final void createTempRoot() throws IOException {
        tempRoot = Files.createTempDirectory("driver-contract-");
        hosts = 0;
    }

    @AfterEach
    final void deleteTempRoot() {
        if (tempRoot != null) {
            FakeFiles.deleteRecursively(tempRoot);
        }
    }

    /** A fresh host with {@code devices} devices, prepared by the kit's hook. */
    final PreparedHost host(int devices) throws Exception {
        FakeHost host = FakeHost.create(tempRoot.resolve("host-" + ++hosts));
        Map<String, String> params = kit.paramsForHost(host, devices);
        assertThat(params)
                .as("paramsForHost(host, %d) must return a map (possibly empty)", devices)
                .isNotNull();
        return new PreparedHost(host, new LinkedHashMap<>(params), devices);
    }

    /** The key an operator writes for parameter {@code key}. */
    final String fullKey(String key) {
        return prefix() + key;
    }

    /** The configuration view Flink hands the factory for {@code params}. */
    final Configuration config(Map<String, String> params) {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(fullKey(k), v));
        return new DelegatingConfiguration(full, prefix());
    }

    /** Calls the factory as Flink does; an Error fails the test, an Exception is the outcome. */
    final Attempt<ExternalResourceDriver> create(Map<String, String> params) {
        return Attempt.of(
                kit.factory().getClass().getName() + ".createExternalResourceDriver",
                () -> kit.factory().createExternalResourceDriver(config(params)));
    }

    /** Creates a driver that must be created without problem. */
    final ExternalResourceDriver driver(PreparedHost host) {
        ExternalResourceDriver driver =
                create(host.params)
                        .value(
                                "Creating the driver with the parameters of a healthy host "
                                        + host.params);
        assertThat(driver).as("the driver the factory created").isNotNull();
        return driver;
    }

    /** Calls {@code retrieveResourceInfo(amount)}; an Error fails the test. */
    static Attempt<Set<? extends ExternalResourceInfo>> retrieve(
            ExternalResourceDriver driver, long amount) {
        return Attempt.of(
                driver.getClass().getName() + ".retrieveResourceInfo(" + amount + ")",
                () -> driver.retrieveResourceInfo(amount));
    }

    /** Retrieves infos that must be retrieved without problem. */
    static Set<? extends ExternalResourceInfo> infos(ExternalResourceDriver driver, long amount) {
        Set<? extends ExternalResourceInfo> infos =
                retrieve(driver, amount).value("retrieveResourceInfo(" + amount + ")");
        assertThat(infos).as("the set retrieveResourceInfo(%d) returned", amount).isNotNull();
        return infos;
    }

    private String prefix() {
        return "external-resource." + kit.resourceName() + ".param.";
    }

    /** A fake host and the parameters that point a driver at it. */
    static final class PreparedHost {
        final FakeHost host;
        final Map<String, String> params;
        final int devices;

        PreparedHost(FakeHost host, Map<String, String> params, int devices) {
            this.host = host;
            this.params = params;
            this.devices = devices;
        }
    }
}
