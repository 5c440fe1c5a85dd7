#!/usr/bin/env bash
# Packs what the device checks need onto a machine that has a GPU but no Java and no network:
# a jlinked Java runtime, every jar of the checked modules' test class paths, the modules' own
# classes and test classes (as jars) and JUnit's console launcher, into .devbundle/ (an ignored
# folder the device runner carries) as one xz archive under 64 MiB. benchmarks/device/run.sh
# unpacks it and runs the checks from it.
#
# Usage: benchmarks/device/bundle.sh   (builds with ./mvnw package -DskipTests; MAVEN_ARGS apply;
#        SKIP_BUILD=1 packs the last build's target/ folders as they are)
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
cd "$root"
out="$root/.devbundle"
modules=(sdk-api job-devices driver-nvidia samples samples-local benchmarks testkit)

[ -n "${SKIP_BUILD:-}" ] || ./mvnw -q -B package dependency:build-classpath -DskipTests -Dmaven.javadoc.skip=true \
  -pl "$(IFS=,; echo "${modules[*]}")" -am \
  -Dmdep.outputFile=target/device-classpath.txt -Dmdep.includeScope=test

rm -rf "$out" && mkdir -p "$out/lib"
junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml)"
./mvnw -B -q dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:1.${junit_version#5.}" \
  -DoutputDirectory="$out" >/dev/null
mv "$out"/junit-platform-console-standalone-*.jar "$out/junit-console.jar"

# Third-party jars, one copy each; the reactor's own modules are packed from their classes below.
# Left out: what no check loads (ArchUnit, byte-buddy, the profiler).
skip='archunit|byte-buddy|async-profiler'
for m in "${modules[@]}"; do
  tr ':' '\n' <"$m/target/device-classpath.txt"
done | awk 'NF && !seen[$0]++' | while read -r jar; do
  case "$jar" in
    */target/*) ;;
    *.jar) basename "$jar" | grep -Eq "$skip" || cp "$jar" "$out/lib/" ;;
  esac
done
# Named to sort after the third-party jars (run.sh lists lib/ in name order): a module's test
# classes may hold stand-ins of a library's classes (sdk-api's tests have a jcuda.runtime.JCuda
# for an architecture rule), which must never shadow the real ones; sdk-api's tests stay out.
for m in "${modules[@]}"; do
  [ -d "$m/target/classes" ] && jar cf "$out/lib/zz-$m.jar" -C "$m/target/classes" .
  [ "$m" != sdk-api ] && [ -d "$m/target/test-classes" ] && jar cf "$out/lib/zz-$m-tests.jar" -C "$m/target/test-classes" .
done
# Plugin jars and Flink's own GPU plugin, for the checks that load a TaskManager's plugins/
mkdir -p "$out/plugins"
cp driver-nvidia/target/driver-nvidia-*-plugin.jar "$out/plugins/" 2>/dev/null || true
cp benchmarks/target/flink-external-resource-gpu.jar "$out/plugins/" 2>/dev/null || true
cp -r benchmarks/target/flink-gpu-scripts "$out/plugins/" 2>/dev/null || true

# Natives for other platforms and for QUIC (netty) and the PTX compiler (the sample's kernel is
# compiled by the driver) go; every jar is rewritten uncompressed, nested jars too, so that one
# xz stream compresses across them (about 2.5x smaller than the jars as shipped).
work="$(mktemp -d)"
restore() {  # jar: rewrite stored, without the entries matching $2
  local jar="$1" drop="$2" dir="$work/x"
  rm -rf "$dir" && mkdir -p "$dir" && (cd "$dir" && unzip -qo "$jar")
  [ -n "$drop" ] && (cd "$dir" && find . -type f | grep -E "$drop" | xargs -r rm -f)
  for inner in $(cd "$dir" && find . -name '*.jar'); do
    local idir="$work/i" ijar="$dir/$inner"
    rm -rf "$idir" && mkdir -p "$idir" && (cd "$idir" && unzip -qo "$ijar") && rm "$ijar"
    (cd "$idir" && zip -q -0 -r -X "$ijar" .)
  done
  rm "$jar" && (cd "$dir" && zip -q -0 -r -X "$jar" .)
}
for jar in "$out"/lib/*.jar; do
  case "$(basename "$jar")" in
    flink-shaded-netty-*) restore "$jar" 'quiche|osx|windows|aarch|riscv|s390|ppc|loongarch' ;;
    jcuda-natives-*) restore "$jar" 'NvPTXCompiler' ;;
    *) restore "$jar" '' ;;
  esac
done
rm -rf "$work"

java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
"$java_home/bin/jlink" --add-modules java.base,java.compiler,java.datatransfer,java.desktop,java.instrument,java.logging,java.management,java.management.rmi,java.naming,java.net.http,java.prefs,java.rmi,java.scripting,java.security.jgss,java.sql,java.transaction.xa,java.xml,jdk.unsupported,jdk.management,jdk.crypto.ec,jdk.zipfs,jdk.jfr \
  --strip-debug --no-man-pages --no-header-files --compress=0 --output "$out/jre"
cp "$java_home/lib/libjsig.so" "$out/jre/lib/" 2>/dev/null || true
(cd "$out" && tar -cf - jre lib plugins junit-console.jar | xz -6 -T2 >"$root/.devbundle.tar.xz.tmp")
rm -rf "$out" && mkdir -p "$out" && mv "$root/.devbundle.tar.xz.tmp" "$out/bundle.tar.xz"
ls -l "$out/bundle.tar.xz" | sed 's/^/bundle: /'
