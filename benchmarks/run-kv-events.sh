#!/usr/bin/env bash
# The node agent's KV event bridge (docs/kv-events.md): real ZMQ publishers (vLLM EventBatch maps)
# -> the bridge in-process -> (a) an HTTP stand-in that only counts (the bridge alone, not durable)
# and (b) the built control plane's durable ingestion (embedded PostgreSQL in a temp KVREUSE_HOME).
# Prints the bridge-alone rate, durable throughput, publish->visible lag in donor selection, and a
# loss-accounting run, labelled with the machine and date; the output is appended to
# benchmarks/BENCHMARKS-kv-events.md when --record is given. The loss run fails the script (exit 3)
# when any published engine batch is neither applied nor dropped after a recorded stream break.
#   benchmarks/run-kv-events.sh [--record] [--only bridge,throughput,lag,loss] [--loss-seconds N]
#                               [lag rate/s, default 50000] [seconds per phase, default 20] [loss seconds, default 60]
# The 10-minute no-loss run: benchmarks/run-kv-events.sh --only loss --loss-seconds 600
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
record=false
phases=bridge,throughput,lag,loss
loss_seconds=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --record) record=true; shift ;;
    --only) phases="$2"; shift 2 ;;
    --loss-seconds) loss_seconds="$2"; shift 2 ;;
    *) break ;;
  esac
done
loss_seconds="${loss_seconds:-${3:-60}}"
./mvnw -q -pl app,benchmarks -am package -DskipTests -Djacoco.skip=true
out=$(mktemp)
{
  echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg); phases $phases"
  "$JAVA_HOME/bin/java" -version 2>&1 | head -1
  # shellcheck disable=SC2086 # KVREUSE_BENCH_JAVA_OPTS: extra -D settings, e.g. -Dkvreuse.bench.lag.pollMicros=0
  "$JAVA_HOME/bin/java" -Xmx1g ${KVREUSE_BENCH_JAVA_OPTS:-} -Dkvreuse.bench.phases="$phases" -cp benchmarks/target/benchmarks.jar \
      io.kvreuse.benchmarks.rest.KvEventsBenchmark \
      app/target/kvreuse.jar "${1:-50000}" "${2:-20}" "$loss_seconds" 2>&1 | grep -v '^SLF4J\|DEBUG\|INFO\|^WARNING: .*Unsafe\|^WARNING: Please consider\|^[A-Z][a-z][a-z] [0-9][0-9], [0-9][0-9][0-9][0-9] '
  echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
if $record; then { echo; echo '```'; cat "$out"; echo '```'; } >> benchmarks/BENCHMARKS-kv-events.md; fi
rm -f "$out"
