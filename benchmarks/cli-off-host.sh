#!/usr/bin/env bash
# Wall time and peak memory of the operator CLI off the TaskManager host: `render` (kubernetes,
# kubernetes --dra, flink-operator, yarn) and `doctor --no-devices`, run from the operator's
# archive with its four driver plugins, for a configuration naming host paths that exist only on
# the TaskManagers (an nvidia-smi path and a coordination folder).
#
#   benchmarks/cli-off-host.sh [RUNS]     (default 5 runs of each command)
#
# Needs the archive: FLINK_DEVICES_ARCHIVE, else dist/target/flink-devices-*.tar.gz (built here with
# ./mvnw -q -pl dist -am package -DskipTests when missing).
# Prints one line per command: min / median / max wall seconds, max RSS, and the exit codes seen.
set -euo pipefail
runs="${1:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "cli-off-host.sh: RUNS must be a positive number, got '$runs'" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
[[ -x /usr/bin/time ]] || { echo "cli-off-host.sh: needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }

archive="${FLINK_DEVICES_ARCHIVE:-$(ls "$root"/dist/target/flink-devices-*.tar.gz 2>/dev/null | head -1 || true)}"
[[ -z "${FLINK_DEVICES_ARCHIVE:-}" || -f "$archive" ]] || { echo "cli-off-host.sh: FLINK_DEVICES_ARCHIVE=$archive is not a file" >&2; exit 2; }
if [[ -z "$archive" ]]; then
  (cd "$root" && ./mvnw -q -B -pl dist -am package -DskipTests) >&2
  archive="$(ls "$root"/dist/target/flink-devices-*.tar.gz | head -1)"
fi

work="$(mktemp -d -t flink-devices-off-host.XXXXXX)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
home="$(ls -d "$work"/flink-devices-*/)"
conf="$work/conf"
mkdir -p "$conf"
# host paths that exist on the TaskManagers only: they must become notes, not failures
cat > "$conf/config.yaml" <<'EOF'
external-resources: gpu;amd;rdma;fpga
external-resource.gpu.amount: 1
external-resource.gpu.driver-factory.class: io.flinkdevices.nvidia.NvidiaGpuDriverFactory
external-resource.gpu.param.backend: nvidia-smi
external-resource.gpu.param.nvidia-smi.path: /opt/nvidia/bin/nvidia-smi
external-resource.gpu.param.coordination.enabled: true
external-resource.gpu.param.coordination.file: /var/lib/flink-devices-off-host/gpu.coord
external-resource.gpu.param.kubernetes.dra.product-name: NVIDIA H100 80GB HBM3
external-resource.amd.amount: 1
external-resource.amd.driver-factory.class: io.flinkdevices.amd.AmdGpuDriverFactory
external-resource.amd.param.backend: sysfs
external-resource.amd.param.yarn.resource-name: amd.com/gpu
external-resource.rdma.amount: 1
external-resource.rdma.driver-factory.class: io.flinkdevices.rdma.RdmaDriverFactory
external-resource.rdma.param.kubernetes.dra.device-class: dranet.net
external-resource.fpga.amount: 1
external-resource.fpga.driver-factory.class: io.flinkdevices.fpga.OpenClFpgaDriverFactory
external-resource.fpga.param.device.types: ACCELERATOR
external-resource.fpga.param.kubernetes.resource-name: example.com/fpga
external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com
EOF

cli="$home/bin/flink-devices"
measure() {
  local name="$1"; shift
  local times=() rss=0 codes=""
  for ((i = 0; i < runs; i++)); do
    local rc=0
    /usr/bin/time -f "%e %M" -o "$work/time" "$cli" "$@" --conf-dir "$conf" --plugins-dir "$home/plugins" \
      > "$work/out" 2> "$work/err" || rc=$?
    read -r secs kb < <(tail -1 "$work/time")
    times+=("$secs")
    (( kb > rss )) && rss=$kb
    [[ " $codes " == *" $rc "* ]] || codes="$codes $rc"
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  printf '%-32s min %s s  median %s s  max %s s  max RSS %d MB  exit%s\n' "$name" \
    "${sorted[0]}" "${sorted[$(( runs / 2 ))]}" "${sorted[$(( runs - 1 ))]}" $(( rss / 1024 )) "$codes"
}

echo "$runs runs each; $(nproc) cores; $(java -version 2>&1 | head -1)"
measure "render kubernetes" render kubernetes
measure "render kubernetes --dra" render kubernetes --dra
measure "render flink-operator --dra" render flink-operator --dra --image flink:2.2 --flink-version 2.2
measure "render yarn" render yarn
measure "doctor --no-devices" doctor --no-devices
