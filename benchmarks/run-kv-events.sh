#!/usr/bin/env bash
# The node agent's KV event bridge (docs/kv-events.md): real ZMQ publishers (vLLM EventBatch maps)
# -> the bridge in-process -> the built control plane's durable ingestion (embedded PostgreSQL in a
# temp KVREUSE_HOME). Prints throughput, publish->visible lag in donor selection, and a
# loss-accounting run, labelled with the machine and date; the output is appended to
# benchmarks/BENCHMARKS-kv-events.md when --record is given.
#   benchmarks/run-kv-events.sh [--record] [lag rate/s, default 50000] [seconds per phase, default 20] [loss seconds, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
record=false
if [[ "${1:-}" == "--record" ]]; then record=true; shift; fi
./mvnw -q -pl app,benchmarks -am package -DskipTests -Djacoco.skip=true
out=$(mktemp)
{
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$JAVA_HOME/bin/java" -version 2>&1 | head -1
  "$JAVA_HOME/bin/java" -Xmx1g -cp benchmarks/target/benchmarks.jar io.kvreuse.benchmarks.rest.KvEventsBenchmark \
      app/target/kvreuse.jar "${1:-50000}" "${2:-20}" "${3:-60}" 2>&1 | grep -v '^SLF4J\|DEBUG\|INFO'
  echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
if $record; then { echo; echo '```'; cat "$out"; echo '```'; } >> benchmarks/BENCHMARKS-kv-events.md; fi
rm -f "$out"
