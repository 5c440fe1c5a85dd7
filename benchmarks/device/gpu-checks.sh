#!/usr/bin/env bash
# The GPU path's checks on a host with an NVIDIA GPU, in one short run (under 120 s). On a lent GPU
# machine without Java: benchmarks/device/bundle.sh here, then benchmarks/device/run.sh gpu there,
# which sets JAVA, CP and OUT. Steps:
#   1. nvidia-smi: which GPU, driver, PCIe link
#   2. the tests that need a GPU (CudaKernelMatVecTest, CudaBatchBackendTest) with JUnit's console
#      launcher, when it is on the class path; a GPU test that skips here counts as a failure
#   3. MatVecThroughput at 256x256, batches 256 and 4096: CPU, the synchronous kernel path and the
#      asynchronous path with 1, 2 and 3 batches in flight, on 1 host thread and on 4 (each with a
#      backend of its own, as 4 subtasks sharing the GPU), in the same JVM
#   4. torch_matvec.py: PyTorch doing the same work (the peer: synchronous and on 2 and 3 streams,
#      pinned and pageable) and the pinned copy bandwidth (the limit)
#
# Environment:
#   JAVA    the java binary (default: java on the PATH); Java 17 or newer
#   CP      class path: samples' classes and test classes, sdk-api's and job-devices' classes, the
#           runtime jars (jcuda, jcuda-natives linux-x86_64, slf4j-api, flink-core), and for step 2
#           assertj-core and JUnit's console launcher (junit-platform-console-standalone); relative
#           entries are taken from the repository root
#   OUT     folder for the results (created): one .log per step and summary.txt
#   PYTHON  python with PyTorch for step 4 (default: python3)
#   SECONDS_PER_ROW  measuring time per row of steps 3 and 4, after a warm-up of a quarter of it (default 1)
# Exit status: 0 when every step passed, 1 otherwise (summary.txt says which).
set -u

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
JAVA="${JAVA:-java}"
PYTHON="${PYTHON:-python3}"
per_row="${SECONDS_PER_ROW:-1}"
: "${CP:?set CP to the class path (see the header of $0)}"
: "${OUT:?set OUT to a folder for the results}"
mkdir -p "$OUT" || { echo "gpu-checks.sh: cannot create OUT=$OUT" >&2; exit 2; }
OUT="$(cd "$OUT" && pwd)"
# Steps run in other folders: a relative path to java or python is taken from here.
case "$JAVA" in /*) ;; */*) JAVA="$PWD/$JAVA" ;; esac
case "$PYTHON" in /*) ;; */*) PYTHON="$PWD/$PYTHON" ;; esac

# Relative class path entries are relative to the repository root; step 2 runs in samples/.
# JCuda's jars go first: a class path of every module's test classes holds a stand-in
# jcuda.runtime.JCuda (sdk-api's ArchUnit test), which must not shadow the real one.
abs_cp=""
jcuda_cp=""
IFS=':' read -r -a entries <<<"$CP"
for e in "${entries[@]}"; do
  [ -n "$e" ] || continue
  case "$e" in /*) ;; *) e="$root/$e" ;; esac
  case "$(basename "$e")" in
    jcuda-[0-9]*.jar | jcublas-[0-9]*.jar | jcuda-natives-* | jcublas-natives-*) jcuda_cp="${jcuda_cp:+$jcuda_cp:}$e" ;;
    *) abs_cp="${abs_cp:+$abs_cp:}$e" ;;
  esac
done
abs_cp="${jcuda_cp:+$jcuda_cp:}$abs_cp"

summary="$OUT/summary.txt"
: >"$summary"
status=0
started=$SECONDS

# step NAME LIMIT_SECONDS DIR COMMAND...: runs COMMAND in DIR under timeout, output to $OUT/NAME.log
# and the console.
step() {
  local name="$1" limit="$2" dir="$3" rc
  shift 3
  echo "== $name (at most ${limit} s)"
  (cd "$dir" && exec timeout --kill-after=5 "$limit" "$@") >"$OUT/$name.log" 2>&1
  rc=$?
  cat "$OUT/$name.log"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "$name: TIMED OUT after ${limit} s" | tee -a "$summary"
    status=1
  elif [ "$rc" != 0 ]; then
    echo "$name: FAILED, exit $rc (log: $OUT/$name.log)" | tee -a "$summary"
    status=1
  else
    echo "$name: ok" | tee -a "$summary"
  fi
  return "$rc"
}

step nvidia-smi 5 "$root" nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current \
  --format=csv

# JUnit's console launcher, under whatever name its jar has on CP (bundle.sh calls it junit-console.jar)
if timeout 30 "$JAVA" -cp "$abs_cp" org.junit.platform.console.ConsoleLauncher --help >/dev/null 2>&1; then
  # in samples/: CudaKernelMatVecTest reads src/main/cuda/matvec.cu
  step gpu-tests 35 "$root/samples" "$JAVA" -cp "$abs_cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests --reports-dir "$OUT/junit" \
    --select-class io.flinkdevices.samples.gpu.CudaKernelMatVecTest \
    --select-class io.flinkdevices.samples.gpu.CudaBatchBackendTest
  if grep -q 'test skipped:' "$OUT/gpu-tests.log"; then
    echo "gpu-tests: FAILED, GPU tests skipped on this host: $(grep -m1 'test skipped:' "$OUT/gpu-tests.log")" | tee -a "$summary"
    status=1
  fi
else
  echo "gpu-tests: SKIPPED, JUnit's console launcher (org.junit.platform.console.ConsoleLauncher) is not on CP" | tee -a "$summary"
  status=1
fi

step matvec-throughput 35 "$root" "$JAVA" -cp "$abs_cp" io.flinkdevices.samples.gpu.MatVecThroughput \
  --dims 256 --batches 256,4096 --slots 1,2,3 --threads 1,4 --seconds "$per_row" --gpu 0
if ! grep -q '^| GPU async x2  *|   4096 |' "$OUT/matvec-throughput.log"; then
  echo "matvec-throughput: FAILED, no asynchronous GPU row at batch 4096" | tee -a "$summary"
  status=1
fi

step torch-matvec 40 "$root" "$PYTHON" "$root/benchmarks/device/torch_matvec.py" \
  --dims 256 --batches 256,4096 --seconds "$per_row" --streams 2,3

echo "== summary ($((SECONDS - started)) s; results in $OUT)"
cat "$summary"
exit "$status"
