#!/usr/bin/env bash
# SIMULATED nvidia-smi, for trying flink-devices on a machine without an NVIDIA GPU.
# It is NOT a GPU and NOT NVIDIA's tool: it answers the queries the flink-devices NVIDIA driver
# makes (discovery, and the monitor's one query per interval), always for the same two H100 GPUs
# (MIG off), in the format nvidia-smi prints. simulated/fault.sh injects faults that it shows:
# a GPU fallen off the bus, an uncorrected ECC count. Anything else is refused with exit code 2.
# Use it only through conf/examples/simulated-nvidia.yaml; never on a host whose tasks need GPUs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
faults="${FLINK_DEVICES_SIMULATED_FAULTS:-$here/faults}"
gpus=(
  "0, GPU-5a1c0000-0000-4000-8000-000000000000, NVIDIA H100 80GB HBM3 (simulated), 81559, 00000000:18:00.0, 9.0, Disabled"
  "1, GPU-5a1c0000-0000-4000-8000-000000000001, NVIDIA H100 80GB HBM3 (simulated), 81559, 00000000:2A:00.0, 9.0, Disabled"
)
lost=(no no)
ecc=(0 0)
# the faults file fault.sh writes: "lost <index>" and "ecc <index> <count>" lines
if [[ -f "$faults" ]]; then
  while read -r what index value _; do
    [[ "$index" =~ ^[01]$ ]] || continue
    case "$what" in
      lost) lost[index]=yes ;;
      ecc) [[ "$value" =~ ^[0-9]{1,18}$ ]] && ecc[index]=$((10#$value)) ;;
    esac
  done < <(head -c 4096 "$faults")
fi
present=()
for i in 0 1; do
  [[ "${lost[i]}" == yes ]] || present+=("$i")
done
if [[ ${#present[@]} -eq 0 ]]; then
  # what nvidia-smi says when the last GPU of a host fell off the bus
  echo "No devices were found"
  exit 6
fi
case "${1:-}" in
  --query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current,clocks_throttle_reasons.active)
    # the listing, with clocks not held down
    for i in "${present[@]}"; do echo "${gpus[i]}, 0x0000000000000000"; done ;;
  --query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current)
    for i in "${present[@]}"; do echo "${gpus[i]}"; done ;;
  --query-gpu=index,uuid,name,memory.total,pci.bus_id,mig.mode.current)
    for i in "${present[@]}"; do
      IFS=',' read -r n u name m p _cc mig <<<"${gpus[i]}"
      echo "$n,$u,$name,$m,$p,$mig"
    done ;;
  --query-gpu=uuid,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.active)
    # the monitor's sample: an idle GPU, 35 C, 72.5 W, no corrected ECC error, clocks not held down
    for i in "${present[@]}"; do
      IFS=',' read -r _n u _ <<<"${gpus[i]}"
      echo "${u# }, 0, 0, 0, 81559, 35, 72.50, 0, ${ecc[i]}, 0x0000000000000000"
    done ;;
  --query-gpu=uuid,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total)
    # the same, as the driver asks an nvidia-smi that does not know clocks_throttle_reasons.active
    for i in "${present[@]}"; do
      IFS=',' read -r _n u _ <<<"${gpus[i]}"
      echo "${u# }, 0, 0, 0, 81559, 35, 72.50, 0, ${ecc[i]}"
    done ;;
  --query-gpu=index)
    for i in "${present[@]}"; do echo "$i"; done ;;
  -L)
    for i in "${present[@]}"; do
      IFS=',' read -r n u name _ <<<"${gpus[i]}"
      echo "GPU $n:$name (UUID:$u)"
    done ;;
  *)
    echo "simulated nvidia-smi: only the queries of the flink-devices NVIDIA driver are simulated, not '$*'" >&2
    exit 2 ;;
esac
