#!/usr/bin/env bash
# flink-devices: NVIDIA GPU discovery script, Flink's discovery-script contract.
#
#   nvidia-gpu-discovery.sh <amount>
#
# Prints ONE line: the indexes of the first <amount> GPUs that nvidia-smi (on the PATH) lists,
# comma-separated, and exits 0. With FLINK_DEVICES_LIST_ALL_GPUS=true in the environment (the
# driver sets it when external-resource.<name>.param.coordination.enabled is true) it prints the
# indexes of EVERY GPU of the host instead, so that the driver's coordination can hand a second
# TaskManager of the host the GPUs the first one does not hold. Exits non-zero with the reason on
# stderr when nvidia-smi is missing or fails, or lists fewer GPUs than <amount>.
#
# The flink-devices NVIDIA driver does not need this script: by default (backend auto) it asks
# NVML, else nvidia-smi, itself and fills every GpuInfo field. The script is here for setups built
# around Flink's GPU plugin layout, and as a template for a site's own discovery. Use it with
#
#   external-resource.gpu.param.discovery-script.path: plugins/nvidia/nvidia-gpu-discovery.sh
#
# (relative to FLINK_HOME). Coordination between TaskManagers of one host is the driver's job
# (external-resource.gpu.param.coordination.enabled: true), so Flink's coordination arguments
# are refused here instead of being ignored.
set -euo pipefail

fail() {
  local code="$1"
  shift
  echo "nvidia-gpu-discovery.sh: $*" >&2
  exit "$code"
}

[[ $# -ge 1 ]] || fail 2 "usage: nvidia-gpu-discovery.sh <amount>"
amount="$1"
[[ "$amount" =~ ^[0-9]+$ ]] && amount=$((10#$amount)) && [[ "$amount" -gt 0 ]] \
  || fail 2 "the amount must be a positive whole number but is '$1' (external-resource.<name>.amount)"
shift

for arg in "$@"; do
  case "$arg" in
    --enable-coordination-mode | --enable-coordination | --coordination-file | --coordination-file=*)
      fail 2 "'$arg' is Flink's script coordination; with flink-devices remove it from" \
        "external-resource.<name>.param.discovery-script.args and set" \
        "external-resource.<name>.param.coordination.enabled: true (the driver then" \
        "coordinates through its own file)"
      ;;
    *)
      fail 2 "unknown argument '$arg' (from external-resource.<name>.param.discovery-script.args)"
      ;;
  esac
done

command -v nvidia-smi > /dev/null 2>&1 \
  || fail 1 "nvidia-smi is not on the PATH ($PATH); install the NVIDIA driver on this host"

if ! listing="$(nvidia-smi --query-gpu=index --format=csv,noheader 2>&1)"; then
  fail 1 "'nvidia-smi --query-gpu=index --format=csv,noheader' failed: $listing"
fi

indexes=()
while IFS= read -r line; do
  line="${line//[[:space:]]/}"
  [[ -z "$line" ]] && continue
  [[ "$line" =~ ^[0-9]+$ ]] || fail 1 "nvidia-smi printed '$line' where a GPU index was expected"
  indexes+=("$line")
done <<< "$listing"

if [[ "${#indexes[@]}" -lt "$amount" ]]; then
  fail 1 "asked for $amount GPUs but nvidia-smi lists ${#indexes[@]}: [${indexes[*]}]"
fi

if [[ "${FLINK_DEVICES_LIST_ALL_GPUS:-}" == "true" ]]; then
  (IFS=,; echo "${indexes[*]}")
else
  (IFS=,; echo "${indexes[*]:0:$amount}")
fi
