#!/usr/bin/env bash
# SIMULATED nvidia-smi, for trying flink-devices on a machine without an NVIDIA GPU.
# It is NOT a GPU and NOT NVIDIA's tool: it answers only the queries the flink-devices NVIDIA
# driver makes, always with the same two H100 GPUs (MIG off), in the format nvidia-smi prints.
# Use it only through conf/examples/simulated-nvidia.yaml; never on a host whose tasks need GPUs.
set -euo pipefail
gpus=(
  "0, GPU-5a1c0000-0000-4000-8000-000000000000, NVIDIA H100 80GB HBM3 (simulated), 81559, 00000000:18:00.0, 9.0, Disabled"
  "1, GPU-5a1c0000-0000-4000-8000-000000000001, NVIDIA H100 80GB HBM3 (simulated), 81559, 00000000:2A:00.0, 9.0, Disabled"
)
case "${1:-}" in
  --query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current)
    printf '%s\n' "${gpus[@]}" ;;
  --query-gpu=index,uuid,name,memory.total,pci.bus_id,mig.mode.current)
    for g in "${gpus[@]}"; do
      IFS=',' read -r i u n m p _cc mig <<<"$g"
      echo "$i,$u,$n,$m,$p,$mig"
    done ;;
  --query-gpu=index)
    echo 0; echo 1 ;;
  -L)
    for g in "${gpus[@]}"; do
      IFS=',' read -r i u n _ <<<"$g"
      echo "GPU $i:$n (UUID:$u)"
    done ;;
  *)
    echo "simulated nvidia-smi: only the queries of the flink-devices NVIDIA driver are simulated, not '$*'" >&2
    exit 2 ;;
esac
