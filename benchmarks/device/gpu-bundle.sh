#!/usr/bin/env bash
# Builds a folder that runs gpu-checks.sh on a GPU host with nothing else installed but the NVIDIA
# driver (and PyTorch for its last step): the classes and the few jars the GPU checks need (not
# Flink's runtime: about 17 MiB), matvec.cu (a test compares the PTX with it), these scripts,
# cp.txt (the class path, relative to the folder) and with --jre a Java runtime made by jlink
# (about 40 MiB). Run on the build machine:
#
#   benchmarks/device/gpu-bundle.sh DIR [--jre]
#
# then on the GPU host, in DIR:
#
#   JAVA=jre/bin/java CP="$(cat cp.txt)" OUT=results benchmarks/device/gpu-checks.sh
#
# MAVEN_ARGS passes options to Maven (e.g. -o for offline). Exits 2 when a step fails, saying which.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
dir="${1:?usage: gpu-bundle.sh DIR [--jre]}"
jre="${2:-}"
[ -z "$jre" ] || [ "$jre" = --jre ] || { echo "gpu-bundle.sh: the second argument can only be --jre, not '$jre'" >&2; exit 2; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# shellcheck disable=SC2086
./mvnw -B -q ${MAVEN_ARGS:-} -pl sdk-api,testkit,job-devices,samples test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$work/samples.cp" >"$work/build.log" 2>&1 \
  || { echo "gpu-bundle.sh: building samples failed:" >&2; tail -20 "$work/build.log" >&2; exit 2; }
junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml)"
launcher_version="1.${junit_version#5.}"
# shellcheck disable=SC2086
./mvnw -B -q ${MAVEN_ARGS:-} dependency:copy \
  -Dartifact="org.junit.platform:junit-platform-console-standalone:$launcher_version" -DoutputDirectory="$work" \
  >"$work/launcher.log" 2>&1 \
  || { echo "gpu-bundle.sh: cannot fetch JUnit's console launcher $launcher_version; see above" >&2; cat "$work/launcher.log" >&2; exit 2; }

rm -rf "$dir/lib" "$dir/samples" "$dir/sdk-api" "$dir/job-devices" "$dir/benchmarks"
mkdir -p "$dir/lib" "$dir/samples/target" "$dir/samples/src/main/cuda" "$dir/sdk-api/target" "$dir/job-devices/target" \
  "$dir/benchmarks/device"
cp -r samples/target/classes samples/target/test-classes "$dir/samples/target/"
cp -r sdk-api/target/classes "$dir/sdk-api/target/"
cp -r job-devices/target/classes "$dir/job-devices/target/"
cp samples/src/main/cuda/matvec.cu "$dir/samples/src/main/cuda/"
cp benchmarks/device/gpu-checks.sh benchmarks/device/torch_matvec.py "$dir/benchmarks/device/"
cp "$work/junit-platform-console-standalone-$launcher_version.jar" "$dir/lib/"
# JCuda (classes and linux-x86_64 natives), SLF4J's API, AssertJ, and what GpuInfo needs of Flink.
tr ':' '\n' <"$work/samples.cp" \
  | grep -E '/(jcuda-[0-9.]+|jcuda-natives-[0-9.]+-linux-x86_64|jcublas-[0-9.]+|slf4j-api-[0-9.]+|assertj-core-[0-9.]+|flink-annotations-[0-9.]+|flink-core-api-[0-9.]+|flink-core-[0-9.]+|commons-lang3-[0-9.]+)\.jar$' \
  | xargs -I{} cp {} "$dir/lib/"
(cd "$dir" && echo "samples/target/test-classes:samples/target/classes:sdk-api/target/classes:job-devices/target/classes:$(ls lib/*.jar | paste -sd:)" >cp.txt)

if [ "$jre" = --jre ]; then
  rm -rf "$dir/jre"
  jlink --add-modules java.base,java.logging,java.management,java.xml,jdk.unsupported,jdk.zipfs,java.instrument \
    --strip-debug --no-man-pages --no-header-files --compress=2 --output "$dir/jre" \
    || { echo "gpu-bundle.sh: jlink failed (it needs a JDK, not a JRE)" >&2; exit 2; }
fi
echo "gpu-bundle.sh: $dir ($(du -sh "$dir" | cut -f1)); on the GPU host, in that folder:"
echo "  JAVA=${jre:+jre/bin/}java CP=\"\$(cat cp.txt)\" OUT=results benchmarks/device/gpu-checks.sh"
