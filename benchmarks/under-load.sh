#!/usr/bin/env bash
# Runs test classes that wait on processes, timeouts or locks many times, each run in a fresh
# Maven/JVM, with a CPU hog on every core beside them (both cores of the build machine busy), and
# counts the runs that failed. Used for the "green every time, also on a loaded machine" figures
# in docs/measured-figures.md.
#
#   benchmarks/under-load.sh RUNS MODULE:TESTCLASS[,TESTCLASS...] [MODULE:...]...
#   benchmarks/under-load.sh 10 sdk-api:CoordinationFaultsITCase cli:CliTimeoutKillsToolTreeITCase
#
# A class whose name ends in ITCase runs in failsafe, any other in surefire. Set HOG=0 to run
# without the hog. Maven options come from MAVEN_ARGS (e.g. MAVEN_ARGS=-o). Prints one line per
# class: "<module>:<class>: <runs> runs, <failed> failed", and exits 1 when any run failed.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$root"
runs="${1:?usage: under-load.sh RUNS MODULE:CLASS[,CLASS...]...}"
shift
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "under-load.sh: RUNS must be a positive whole number, got '$runs'" >&2; exit 2; }
(($# > 0)) || { echo "under-load.sh: name at least one MODULE:CLASS" >&2; exit 2; }

hogs=()
stop_hogs() { for p in "${hogs[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap stop_hogs EXIT
if [ "${HOG:-1}" != 0 ]; then
  for _ in $(seq "$(nproc)"); do
    ( while :; do :; done ) &
    hogs+=("$!")
  done
fi

logs="$(mktemp -d)"
status=0
for spec in "$@"; do
  module="${spec%%:*}"
  classes="${spec#*:}"
  its=(); units=()
  IFS=',' read -ra all <<<"$classes"
  for c in "${all[@]}"; do
    if [[ "$c" == *ITCase ]]; then its+=("$c"); else units+=("$c"); fi
  done
  it_list="$(IFS=,; echo "${its[*]:-none}")"
  unit_list="$(IFS=,; echo "${units[*]:-none}")"
  failed=0
  for i in $(seq "$runs"); do
    log="$logs/${module}-$i.log"
    # the module's upstream modules come from the reactor (-am), tests of those are skipped by the filters
    if ! ./mvnw -B -pl "$module" -am verify -Dit.test="$it_list" -Dtest="$unit_list" \
        -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false >"$log" 2>&1; then
      failed=$((failed + 1))
      echo "  run $i failed, log: $log" >&2
      grep -E "FAIL|Tests run:.*Failures: [1-9]|Errors: [1-9]" "$log" | head -5 >&2 || true
    fi
  done
  echo "$module:$classes: $runs runs, $failed failed"
  ((failed == 0)) || status=1
done
exit "$status"
