#!/usr/bin/env bash
# Packs the transfer-ffm GPU tier into one directory for a CUDA host that has no Java and no
# network: a jlinked Java 25 runtime, the transfer-ffm jar, the GPU tier's test classes, the C
# sources the host compiles (emulator + its CUDA lane, stand-in engine) and run.sh.
#
#   transfer-ffm/gpu/pack.sh [--build-dir DIR] [--no-build] [OUT]
#
#   --build-dir DIR  the kvreuse checkout to build and pack from (default: the one holding this
#                    script); Maven runs there, so point it at a private copy while others build
#   --no-build       pack what DIR's transfer-ffm/target already holds
#   OUT              the pack directory (default: <this checkout>/.gpu-tier, ignored by git);
#                    emptied first
#
# Everything that reaches the host counts against a 64 MiB limit, so the pack checks its own size.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo"
do_build=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
out="${out:-$repo/.gpu-tier}"
limit=$((64 * 1024 * 1024))

java_home="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
if ! "$java_home/bin/java" -version 2>&1 | grep -q '"25'; then
  echo "JAVA_HOME=$java_home is not a Java 25 JDK (jlink must make a Java 25 runtime)" >&2
  exit 1
fi

module="$build/transfer-ffm"
if [ "$do_build" = 1 ]; then
  (cd "$build" && JAVA_HOME="$java_home" ./mvnw -q -pl transfer-ffm -DskipTests package test-compile)
fi
main_jar="$(ls "$module"/target/kvreuse-transfer-ffm-*.jar | grep -v -e '-tests' -e '-sources' | head -1)"
[ -f "$main_jar" ] || { echo "no transfer-ffm jar under $module/target: build first" >&2; exit 1; }
[ -d "$module/target/test-classes/io/kvreuse/transfer/gpu" ] || {
  echo "no GPU tier classes under $module/target/test-classes: run test-compile" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/lib" "$out/src"
cp "$main_jar" "$out/lib/kvreuse-transfer-ffm.jar"
# only the GPU tier's package: the rest of the test classes need JUnit, which does not travel
"$java_home/bin/jar" --create --file "$out/lib/kvreuse-transfer-ffm-gpu-tier.jar" \
  -C "$module/target/test-classes" io/kvreuse/transfer/gpu

# the smallest runtime that runs them: the modules jdeps finds (java.base today)
modules="$("$java_home/bin/jdeps" --multi-release 25 --ignore-missing-deps --print-module-deps \
  "$out/lib/kvreuse-transfer-ffm.jar" "$out/lib/kvreuse-transfer-ffm-gpu-tier.jar")"
"$java_home/bin/jlink" --add-modules "${modules:-java.base}" --strip-debug --no-man-pages \
  --no-header-files --compress=zip-9 --output "$out/runtime"

cp "$module/src/main/c/nixl_emulator.c" "$module/src/main/c/emulator_cuda.c" \
  "$module/src/main/c/emulator_cuda.h" "$module/gpu/standin_engine.cu" "$out/src/"
cp "$module/gpu/run.sh" "$out/run.sh"
chmod +x "$out/run.sh"

# what was packed, printed by run.sh so that every log names its sources
{
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) from $build"
  if git -C "$build" rev-parse --git-dir >/dev/null 2>&1; then src_repo="$build"; else src_repo="$repo"; fi
  echo "commit $(git -C "$src_repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    [ -n "$(git -C "$src_repo" status --porcelain -- transfer-ffm 2>/dev/null)" ] && echo ' with uncommitted changes in transfer-ffm')"
  echo "runtime: $("$out/runtime/bin/java" -version 2>&1 | head -1), modules $modules"
} > "$out/PACK-INFO"

size=$(du -sb "$out" | cut -f1)
printf 'packed %s: %.1f MiB (runtime modules: %s)\n' "$out" "$(echo "$size / 1048576" | bc -l)" "$modules"
if [ "$size" -gt "$limit" ]; then
  echo "the pack is larger than 64 MiB" >&2
  exit 1
fi
echo "on the GPU host: bash <pack>/run.sh (the checkout travels too: keep pack + tree within 64 MiB)"
