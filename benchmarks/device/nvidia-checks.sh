#!/usr/bin/env bash
# NVML and the NVIDIA monitor on a real GPU, in well under 90 s. Gets JAVA (a java binary), CP
# (every module's classes and runtime jars) and OUT (a folder for results) from
# benchmarks/device/run.sh; BUNDLE (the unpacked bundle, for Flink's GPU plugin), FLINK_GPU_JAR and
# NVML_LIBRARY (an absolute path; default: libnvidia-ml.so.1 found by the dynamic linker) are optional.
# Prints, each step bounded by timeout (35 + 20 + 30 s at worst; a few seconds on an idle GPU host):
#   (a) io.flinkdevices.nvidia.NvmlCheck: NVML metrics through our binding vs nvidia-smi's
#       (PASS/FAIL per GPU), first discovery through the nvml backend in a fresh JVM, later
#       discoveries and NVML samples per device over 1000 samples, one nvidia-smi metrics spawn;
#   (b) the floor: nvmlInit -> every property our driver reports -> nvmlShutdown through pynvml
#       (nvidia-ml-py) in a fresh Python process;
#   (c) side by side in one fresh JVM: Flink's own GPU plugin, ours through nvidia-smi and through
#       NVML, and a bare nvidia-smi spawn (io.flinkdevices.benchmarks.RealGpuDiscovery).
set -u
: "${JAVA:?JAVA (a java binary) must be set}" "${CP:?CP (the class path) must be set}" "${OUT:?OUT (a results folder) must be set}"
mkdir -p "$OUT"
status=0

echo "-- (a) NVML vs nvidia-smi, and what discovery and a sample cost"
timeout 35 "$JAVA" -Xmx512m -cp "$CP" io.flinkdevices.nvidia.NvmlCheck --samples 1000 ${NVML_LIBRARY:+--library "$NVML_LIBRARY"} 2>"$OUT/nvml-check.err" | tee "$OUT/nvml-check.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "(a) exit $rc; stderr tail:"; tail -5 "$OUT/nvml-check.err"; status=1; }

echo "-- (a2) where a fresh JVM's first NVML discovery spends its time (3 fresh JVMs)"
for i in 1 2 3; do
  timeout 20 "$JAVA" -Xmx512m -cp "$CP" io.flinkdevices.nvidia.NvmlCheck --phases ${NVML_LIBRARY:+--library "$NVML_LIBRARY"} 2>>"$OUT/nvml-phases.err" | tee -a "$OUT/nvml-phases.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "(a2) exit $rc; stderr tail:"; tail -5 "$OUT/nvml-phases.err"; status=1; break; }
done

echo "-- (b) pynvml: nvmlInit -> all properties -> nvmlShutdown in a fresh process (the floor)"
timeout 20 python3 - <<'PY' 2>&1 | tee "$OUT/pynvml.txt"
import subprocess, sys, statistics
code = r'''
import time
t0 = time.perf_counter()
import pynvml as n
t1 = time.perf_counter()
n.nvmlInit()
t2 = time.perf_counter()
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    n.nvmlDeviceGetName(h); n.nvmlDeviceGetUUID(h); n.nvmlDeviceGetPciInfo(h).busId
    n.nvmlDeviceGetMemoryInfo(h).total; n.nvmlDeviceGetCudaComputeCapability(h)
    try:
        n.nvmlDeviceGetMigMode(h)
    except n.NVMLError:
        pass
t3 = time.perf_counter()
n.nvmlShutdown()
t4 = time.perf_counter()
print("%.3f %.3f %.3f" % ((t2 - t1) * 1e3, (t4 - t1) * 1e3, (t3 - t2) * 1e3))
'''
runs = []
for _ in range(5):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=5)
    if r.returncode != 0:
        print("pynvml FAILED:", r.stderr.strip()[-300:]); sys.exit(1)
    runs.append([float(x) for x in r.stdout.split()])
init = statistics.median(r[0] for r in runs); whole = statistics.median(r[1] for r in runs); props = statistics.median(r[2] for r in runs)
print("pynvml in a fresh process (median of 5): nvmlInit %.2f ms, init->all properties->shutdown %.2f ms (properties %.3f ms)" % (init, whole, props))
# what each call costs once NVML is up, as NvmlCheck's "NVML calls through the binding" line
import time
import pynvml as n
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
calls = [("count", n.nvmlDeviceGetCount), ("handle", lambda: n.nvmlDeviceGetHandleByIndex(0)),
         ("uuid", lambda: n.nvmlDeviceGetUUID(h)), ("name", lambda: n.nvmlDeviceGetName(h)),
         ("memory", lambda: n.nvmlDeviceGetMemoryInfo(h)), ("pci", lambda: n.nvmlDeviceGetPciInfo(h)),
         ("compute capability", lambda: n.nvmlDeviceGetCudaComputeCapability(h)),
         ("MIG mode", lambda: n.nvmlDeviceGetMigMode(h)), ("utilization", lambda: n.nvmlDeviceGetUtilizationRates(h)),
         ("temperature", lambda: n.nvmlDeviceGetTemperature(h, 0)), ("power", lambda: n.nvmlDeviceGetPowerUsage(h)),
         ("ECC", lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 0))]
parts = []
for name, f in calls:
    t = []
    for _ in range(200):
        s0 = time.perf_counter()
        try:
            f()
        except n.NVMLError:
            pass
        t.append(time.perf_counter() - s0)
    parts.append("%s %.1f us" % (name, statistics.median(t) * 1e6))
n.nvmlShutdown()
print("NVML calls through pynvml (median of 200, GPU 0): " + ", ".join(parts))
PY
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "(b) exit $rc"; status=1; }

echo "-- (c) side by side in one fresh JVM: Flink's GPU plugin, ours (nvidia-smi, nvml), a bare spawn"
flink_jar="${FLINK_GPU_JAR:-${BUNDLE:-/nonexistent}/plugins/flink-external-resource-gpu.jar}"
[ -f "$flink_jar" ] || flink_jar="benchmarks/target/flink-external-resource-gpu.jar"
if [ -f "$flink_jar" ]; then
  timeout 30 "$JAVA" -Xmx512m -cp "$CP" io.flinkdevices.benchmarks.RealGpuDiscovery --flink-jar "$flink_jar" --rounds 10 \
    ${NVML_LIBRARY:+--library "$NVML_LIBRARY"} \
    2>"$OUT/side-by-side.err" | tee "$OUT/side-by-side.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "(c) exit $rc; stderr tail:"; tail -5 "$OUT/side-by-side.err"; status=1; }
else
  echo "(c) skipped: Flink's flink-external-resource-gpu.jar is neither in \$BUNDLE/plugins nor in benchmarks/target"
fi
exit $status
