#!/usr/bin/env bash
# The GPU sample job end to end on a GPU host, for the device run (run.sh gives a check 240 s; the
# steps here are bounded to 220 s together, typically about 80 s): the pipeline's own ceiling with no device (PipelineThroughput), then
# MatrixVectorLocal on the nvidia path (flink-devices' NVIDIA driver hands out the GPU) at batch
# 4096 with 1, 2, 4 and 8 subtasks sharing GPU 0. Prints, per run, records/s end to end and inside
# the batch calls, and keeps every log under $OUT.
#
#   JAVA  the java to run (default: java)
#   CP    class path with every module's classes and runtime jars (samples-local, samples,
#         job-devices, sdk-api, testkit, driver-nvidia and their dependencies), for example
#         CP="$(./mvnw -q -pl samples-local dependency:build-classpath -Dmdep.outputFile=/dev/stdout):samples-local/target/classes"
#   OUT   where the logs go (default: ./job-checks-out)
#   RECORDS       vectors per GPU run (default 8000000)
#   PIPE_RECORDS  vectors through the no-device pipeline (default 20000000)
set -u
JAVA=${JAVA:-java}
: "${CP:?set CP to the class path (see the header of $0)}"
OUT=${OUT:-./job-checks-out}
RECORDS=${RECORDS:-8000000}
PIPE_RECORDS=${PIPE_RECORDS:-20000000}
mkdir -p "$OUT"
status=0

run() { # name limit-seconds main-class args...
    local name=$1 limit=$2
    shift 2
    echo "== $name: $*"
    # -Xms = -Xmx as Flink starts a TaskManager: a heap the collector shrinks and grows again made
    # the same local-cluster run vary fourfold (docs/measured-figures.md, the pipeline section)
    timeout -k 5 "$limit" "$JAVA" -Xms8g -Xmx8g -cp "$CP" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "   exit $rc (124: over ${limit} s); last lines of $OUT/$name.log:"
        tail -n 15 "$OUT/$name.log" | sed 's/^/   | /'
        status=1
    fi
    grep -E "records/s|records per CPU|subtask [0-9]+:|wrong|inside the batch calls" "$OUT/$name.log" \
        | grep -v "^[[:space:]]*at " | head -n 14 | sed 's/^/   /'
}

nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader \
    >"$OUT/gpu.txt" 2>&1 && sed 's/^/GPU: /' "$OUT/gpu.txt"

run pipeline 40 io.flinkdevices.samples.gpu.PipelineThroughput \
    --records "$PIPE_RECORDS" --dims 256 --batch 4096 --slots 2 --parallelism 1 --repeat 2 --matvec-records 0 --modes checksum
# MatrixVectorLocal batch records dims parallelism devices GPUs slots
run matvec-p1 45 io.flinkdevices.samples.gpu.MatrixVectorLocal 4096 "$RECORDS" 256 1 nvidia 1 3
run matvec-p2 45 io.flinkdevices.samples.gpu.MatrixVectorLocal 4096 "$RECORDS" 256 2 nvidia 1 3
run matvec-p4 45 io.flinkdevices.samples.gpu.MatrixVectorLocal 4096 "$RECORDS" 256 4 nvidia 1 3
run matvec-p8 45 io.flinkdevices.samples.gpu.MatrixVectorLocal 4096 "$RECORDS" 256 8 nvidia 1 3
exit $status
