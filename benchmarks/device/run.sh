#!/usr/bin/env bash
# Runs the device checks on a machine with an NVIDIA GPU from the bundle benchmarks/device/bundle.sh
# made (.devbundle/bundle.tar.xz in the repository root, unpacked into $BUNDLE_DIR, /tmp/devbundle). Each check script gets JAVA (the bundled java), CP
# (every bundled jar) and OUT (where its results go) and is bounded; their output goes to
# $OUT/<check>.log and to stdout. Usage: benchmarks/device/run.sh [check ...]
# (checks: nvidia gpu job; default all).
set -uo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
bundle="${BUNDLE_DIR:-/tmp/devbundle}"
if [ ! -x "$bundle/jre/bin/java" ]; then
  mkdir -p "$bundle" && xz -dc "$root/.devbundle/bundle.tar.xz" | tar -xf - -C "$bundle" \
    || { echo "run.sh: cannot unpack $root/.devbundle/bundle.tar.xz (run benchmarks/device/bundle.sh)" >&2; exit 2; }
fi
export JAVA="$bundle/jre/bin/java"
# jlink leaves out the class data sharing archive every JDK ships (lib/server/classes.jsa); without it
# each fresh JVM loads and verifies the JDK's classes from the image, which no TaskManager does.
# Made here, once per unpacked bundle (a few seconds), rather than carried (13 MB).
if [ ! -f "$bundle/jre/lib/server/classes.jsa" ]; then
  "$JAVA" -Xshare:dump >/dev/null 2>&1 || echo "run.sh: $JAVA -Xshare:dump failed: fresh JVMs run without the JDK's class data sharing archive" >&2
fi
CP="$(ls "$bundle"/lib/*.jar | tr '\n' ':')$bundle/junit-console.jar"
export CP
export OUT="${OUT:-$(mktemp -d)}"
export BUNDLE="$bundle"
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=(nvidia gpu job)

echo "== host"
nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader || true
"$JAVA" -version 2>&1 | head -1
status=0
for c in "${checks[@]}"; do
  script="$root/benchmarks/device/$c-checks.sh"
  echo "== $c ($script)"
  if [ ! -f "$script" ]; then echo "no such check: $script"; status=1; continue; fi
  start=$(date +%s)
  timeout 240 bash "$script" 2>&1 | tee "$OUT/$c.log"
  rc=${PIPESTATUS[0]}
  echo "== $c: exit $rc after $(( $(date +%s) - start )) s"
  [ "$rc" -eq 0 ] || status=1
done
exit $status
