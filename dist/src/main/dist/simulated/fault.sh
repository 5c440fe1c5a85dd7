#!/usr/bin/env bash
# Injects and clears faults on the SIMULATED GPUs of simulated/nvidia-smi.sh, so that a trial shows
# what the NVIDIA driver's monitor does with them (health, metrics, quarantine, fail-over):
#   simulated/fault.sh gpu-lost 1     GPU 1 falls off the bus: nvidia-smi no longer lists it
#   simulated/fault.sh gpu-back 1     GPU 1 comes back
#   simulated/fault.sh ecc 0 5        GPU 0's volatile uncorrected ECC count becomes 5
#   simulated/fault.sh clear          every GPU back, every ECC count 0
#   simulated/fault.sh                the faults in effect
# The faults live in simulated/faults (FLINK_DEVICES_SIMULATED_FAULTS overrides it for both scripts).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
faults="${FLINK_DEVICES_SIMULATED_FAULTS:-$here/faults}"

usage() {
  echo "usage: $0 [gpu-lost <0|1> | gpu-back <0|1> | ecc <0|1> <count> | clear]" >&2
  echo "$0: $1" >&2
  exit 2
}

gpu() {
  [[ "${1:-}" =~ ^[01]$ ]] || usage "expected a simulated GPU index, 0 or 1, but got '${1:-}'"
}

# the file with its lines for GPU $1 of kind $2 left out
without() {
  if [[ -f "$faults" ]]; then
    grep -v -E "^$2 $1( |\$)" "$faults" || true
  fi
}

# replaces the faults file in one rename, so that nvidia-smi.sh never reads half of it
write() {
  local tmp
  tmp="$(mktemp "$faults.XXXXXX")" || { echo "$0: cannot write beside $faults" >&2; exit 1; }
  cat > "$tmp"
  mv -f "$tmp" "$faults"
}

case "${1:-}" in
  gpu-lost)
    gpu "${2:-}"
    { without "$2" lost; echo "lost $2"; } | write
    echo "simulated GPU $2 fell off the bus: nvidia-smi.sh no longer lists it" ;;
  gpu-back)
    gpu "${2:-}"
    without "$2" lost | write
    echo "simulated GPU $2 is back" ;;
  ecc)
    gpu "${2:-}"
    [[ "${3:-}" =~ ^[0-9]{1,18}$ ]] || usage "expected an ECC count, a whole number from 0, but got '${3:-}'"
    { without "$2" ecc; echo "ecc $2 $((10#$3))"; } | write
    echo "simulated GPU $2: volatile uncorrected ECC count $((10#$3))" ;;
  clear)
    rm -f "$faults"
    echo "simulated GPUs: no fault" ;;
  "")
    if [[ -s "$faults" ]]; then cat "$faults"; else echo "simulated GPUs: no fault"; fi ;;
  *)
    usage "unknown command '$1'" ;;
esac
