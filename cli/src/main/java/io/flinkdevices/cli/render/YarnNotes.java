package io.flinkdevices.cli.render;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a Yarn cluster needs beyond the rendered files, as comment lines: where the files go, the
 * scheduler's calculator, each type's NodeManager plugin (or that there is none), and what isolation
 * of the devices takes.
 */
final class YarnNotes {

    private static final String YARN_GPU = "yarn.io/gpu";
    private static final String YARN_FPGA = "yarn.io/fpga";

    private YarnNotes() {}

    /** The notes for a cluster that defines {@code types}. */
    static List<String> of(Set<String> types) {
        List<String> notes = new ArrayList<>();
        notes.add(
                YarnRender.RESOURCE_TYPES
                        + " goes into the Hadoop configuration directory of the ResourceManager and"
                        + " of every NodeManager, "
                        + YarnRender.NODE_RESOURCES
                        + " into that of each NodeManager with these devices (each value set to the"
                        + " number of devices of that node); restart them after the change.");
        if (!types.isEmpty()) {
            notes.add(
                    "Scheduler: merge the property of "
                            + YarnRender.CAPACITY_SCHEDULER
                            + " above into the ResourceManager's ("
                            + YarnRender.CALCULATOR_KEY
                            + ": "
                            + YarnRender.DOMINANT_CALCULATOR
                            + "); under the default calculator, which counts memory only, the"
                            + " ResourceManager does not start with these resource types. With the"
                            + " FairScheduler, use the drf scheduling policy"
                            + " (defaultQueueSchedulingPolicy in its allocation file) instead.");
        }
        for (String type : types) {
            notes.add(typeNote(type));
        }
        if (!types.isEmpty()) {
            notes.add(
                    "Isolation: Yarn's device plugins keep a container to its own devices only"
                            + " under the LinuxContainerExecutor with cgroups (yarn-site.xml:"
                            + " yarn.nodemanager.container-executor.class"
                            + " org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor,"
                            + " yarn.nodemanager.linux-container-executor.resources-handler.class"
                            + " org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler);"
                            + " under the DefaultContainerExecutor every container sees every"
                            + " device of its node.");
        }
        return notes;
    }

    /** What a NodeManager needs for {@code type} beside its count. */
    private static String typeNote(String type) {
        if (type.equals(YARN_GPU)) {
            return YARN_GPU
                    + ": Yarn's GPU plugin (add yarn.io/gpu to yarn.nodemanager.resource-plugins"
                    + " in yarn-site.xml) finds NVIDIA GPUs with nvidia-smi"
                    + " (yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables),"
                    + " reports their number in place of "
                    + YarnRender.NODE_RESOURCES
                    + "'s and isolates them with cgroups ([gpu] module.enabled=true in"
                    + " container-executor.cfg). It knows NVIDIA GPUs only: on nodes with AMD GPUs"
                    + " leave it off; the count then comes from "
                    + YarnRender.NODE_RESOURCES
                    + " and Yarn isolates nothing.";
        }
        if (type.equals(YARN_FPGA)) {
            return YARN_FPGA
                    + ": Yarn's FPGA plugin (add yarn.io/fpga to yarn.nodemanager.resource-plugins"
                    + " in yarn-site.xml) finds boards through its vendor plugin"
                    + " (yarn.nodemanager.resource-plugins.fpga.vendor-plugin.class, Intel's aocl"
                    + " by default), reports their number in place of "
                    + YarnRender.NODE_RESOURCES
                    + "'s and isolates them with cgroups ([fpga] module.enabled=true in"
                    + " container-executor.cfg); without it the count comes from "
                    + YarnRender.NODE_RESOURCES
                    + " and Yarn isolates nothing.";
        }
        return type
                + ": Yarn has no plugin for this type: the NodeManager offers the count of "
                + YarnRender.NODE_RESOURCES
                + " and isolates nothing; turn on the driver's coordination so that"
                + " TaskManagers on one node take different devices.";
    }
}
