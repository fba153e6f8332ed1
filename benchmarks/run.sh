#!/usr/bin/env bash
# Builds the benchmark jar and runs the prefix-index benchmarks: footprint, load-robust lookup cost
# (LookupCost), lookups (throughput, latency percentiles, allocation per op) and ingestion. Extra arguments go to JMH, e.g.
#   benchmarks/run.sh -f 3 -i 10        (longer, steadier run)
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
JAVA="$JAVA_HOME/bin/java"
./mvnw -q -pl benchmarks -am package -DskipTests
echo "== machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$JAVA" -version 2>&1 | head -1
echo "== footprint"
"$JAVA" -Xms6g -Xmx6g -cp benchmarks/target/benchmarks.jar io.kvreuse.benchmarks.IndexFootprint
echo "== lookup cost (CPU time per lookup ÷ a baseline loop, table lookups and rounds per lookup)"
"$JAVA" -Xms6g -Xmx6g -XX:+AlwaysPreTouch -XX:+UseTransparentHugePages -cp benchmarks/target/benchmarks.jar \
  io.kvreuse.benchmarks.LookupCost 3 100000
echo "== lookups and ingestion"
"$JAVA" -jar benchmarks/target/benchmarks.jar 'Index(Lookup|Ingest)Benchmark' \
  -f 1 -wi 3 -i 5 -w 1s -r 2s -prof gc -jvmArgsAppend -XX:+UseTransparentHugePages "$@"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
