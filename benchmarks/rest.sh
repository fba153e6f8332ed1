#!/usr/bin/env bash
# REST benchmarks against the built jar (embedded PostgreSQL in a temp KVREUSE_HOME): inventory
# ingestion durable through the API, then open-loop donor selection beside a trivial endpoint.
#   benchmarks/rest.sh [rate per second, default 1000] [seconds, default 30] [ingest: the ingestion phase only]
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
./mvnw -q -pl app,benchmarks -am package -DskipTests -Djacoco.skip=true
echo "== machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$JAVA_HOME/bin/java" -version 2>&1 | head -1
# shellcheck disable=SC2086 # KVREUSE_BENCH_JAVA_OPTS: extra -D settings (benchmarks/README.md)
"$JAVA_HOME/bin/java" -Xmx1g ${KVREUSE_BENCH_JAVA_OPTS:-} -cp benchmarks/target/benchmarks.jar io.kvreuse.benchmarks.rest.RestBenchmark app/target/kvreuse.jar "${1:-1000}" "${2:-30}" ${3:+"$3"}
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
