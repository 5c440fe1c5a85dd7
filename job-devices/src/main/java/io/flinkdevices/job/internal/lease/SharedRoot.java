package io.flinkdevices.job.internal.lease;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * The one lease table of this JVM, reached from every class loader.
 *
 * <p>Every job runs in a user-code class loader of its own, usually child-first, so a static field
 * of ours exists once per job. The table must instead be one per TaskManager process: it lives in
 * the platform MBean server, which every loader reaches, as an object made of JDK classes only (a
 * map under its own monitor, holding lists, strings, numbers, the infos Flink handed out and weak
 * references to task threads). Any copy of this library, in any loader, reads and changes it by
 * the same rules, and no class of a job is kept alive by it after the job leaves.
 */
final class SharedRoot {

    /** Where the table is registered; JMX tools show it under this name. */
    static final String OBJECT_NAME = "io.flinkdevices:type=DeviceLeaseTable";

    /** The layout of the table; a copy of this library that finds another one refuses to use it. */
    static final int FORMAT = 1;

    static final String KEY_FORMAT = "format";
    static final String KEY_GROUPS = "groups";

    /** This copy's reference to the table: the MBean server is asked once per class loader. */
    private static volatile Map<String, Object> cached;

    private SharedRoot() {}

    /** The table, registered by the first caller in this JVM. */
    static Map<String, Object> get() {
        Map<String, Object> table = cached;
        if (table == null) {
            table = lookUp();
            cached = table;
        }
        return table;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> lookUp() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            ObjectName name = new ObjectName(OBJECT_NAME);
            if (!server.isRegistered(name)) {
                Map<String, Object> fresh = new HashMap<>();
                fresh.put(KEY_FORMAT, FORMAT);
                fresh.put(KEY_GROUPS, new java.util.ArrayList<Object>());
                // JDK classes only: a completed future is a JDK object whose get() returns the table.
                StandardMBean bean = new StandardMBean(CompletableFuture.completedFuture(fresh), Future.class);
                try {
                    server.registerMBean(bean, name);
                } catch (InstanceAlreadyExistsException raced) {
                    // another loader registered it first: use theirs
                }
            }
            Object table = server.invoke(name, "get", new Object[0], new String[0]);
            Map<String, Object> map = (Map<String, Object>) table;
            Object format = map.get(KEY_FORMAT);
            if (!Integer.valueOf(FORMAT).equals(format)) {
                throw new IllegalStateException("the device lease table of this TaskManager (JMX " + OBJECT_NAME
                        + ") has layout " + format + " but this job-devices library reads layout " + FORMAT
                        + ": jobs in one TaskManager must use job-devices releases with the same lease table layout");
            }
            return map;
        } catch (JMException | ClassCastException e) {
            throw new IllegalStateException("cannot reach the device lease table of this TaskManager (JMX "
                    + OBJECT_NAME + "): " + e, e);
        }
    }
}
