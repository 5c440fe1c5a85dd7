#!/usr/bin/env bash
# Runs test classes that wait on processes, timeouts or locks many times, each run in a JVM of its
# own, with a CPU hog on every core beside them (both cores of the build machine busy), and counts
# the runs that failed. Used for the "green every time, also on a loaded machine" figures in
# docs/measured-figures.md.
#
#   benchmarks/under-load.sh RUNS MODULE:TESTCLASS[,TESTCLASS...] [MODULE:...]...
#   benchmarks/under-load.sh 20 sdk-api:CoordinationFaultsITCase cli:CliTimeoutKillsToolTreeITCase
#
# Each MODULE is compiled once with its upstream modules (test classes included); then every run
# starts a fresh JVM with JUnit's console launcher on the module's test class path. Classes are
# simple names (the package is found under MODULE/target/test-classes). HOG=0 runs without the hog;
# MAVEN_ARGS passes options to Maven (e.g. -o); JAVA_OPTS passes options to every test JVM (the
# system properties an ITCase's failsafe configuration sets, e.g.
# JAVA_OPTS="-Dnvidia.plugin.jar=$PWD/driver-nvidia/target/driver-nvidia-0.1.0-SNAPSHOT-plugin.jar",
# with the plugin jar built first). Prints one line per class,
# "<module>:<class>: <runs> runs, <failed> failed", and exits 1 when any run failed.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$root"
runs="${1:?usage: under-load.sh RUNS MODULE:CLASS[,CLASS...]...}"
shift
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "under-load.sh: RUNS must be a positive whole number, got '$runs'" >&2; exit 2; }
(($# > 0)) || { echo "under-load.sh: name at least one MODULE:CLASS" >&2; exit 2; }

work="$(mktemp -d)"
junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml)"
launcher_version="1.${junit_version#5.}"
./mvnw -B -q dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:$launcher_version" \
  -DoutputDirectory="$work" >"$work/launcher.log" 2>&1 \
  || { echo "under-load.sh: cannot fetch JUnit's console launcher $launcher_version; see $work/launcher.log" >&2; exit 2; }
launcher="$work/junit-platform-console-standalone-$launcher_version.jar"

hogs=()
stop_hogs() { for p in "${hogs[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap stop_hogs EXIT

status=0
for spec in "$@"; do
  module="${spec%%:*}"
  IFS=',' read -ra classes <<<"${spec#*:}"
  [ -d "$module" ] || { echo "under-load.sh: no module $module" >&2; exit 2; }
  ./mvnw -B -q -pl "$module" -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$work/$module.cp" >"$work/$module-build.log" 2>&1 \
    || { echo "under-load.sh: building $module failed; see $work/$module-build.log" >&2; exit 2; }
  cp="$module/target/test-classes:$module/target/classes:$(cat "$work/$module.cp"):$launcher"
  if [ "${HOG:-1}" != 0 ] && ((${#hogs[@]} == 0)); then
    for _ in $(seq "$(nproc)"); do
      ( while :; do :; done ) &
      hogs+=("$!")
    done
  fi
  for simple in "${classes[@]}"; do
    file="$(cd "$module/target/test-classes" && find . -name "$simple.class" | head -1)"
    [ -n "$file" ] || { echo "under-load.sh: no test class $simple in $module" >&2; exit 2; }
    class="$(echo "${file#./}" | sed 's:\.class$::; s:/:.:g')"
    failed=0
    for i in $(seq "$runs"); do
      log="$work/$simple-$i.log"
      if ! (cd "$module" && java ${JAVA_OPTS:-} -Dflinkdevices.repo.root="$root" -cp "$(echo "$cp" | sed "s:$module/target:target:g")" \
          org.junit.platform.console.ConsoleLauncher execute --disable-banner --details=tree --fail-if-no-tests \
          --select-class "$class") >"$log" 2>&1; then
        failed=$((failed + 1))
        echo "  $simple run $i failed, log: $log" >&2
      fi
    done
    echo "$module:$simple: $runs runs, $failed failed"
    ((failed == 0)) || status=1
  done
done
exit "$status"
