#!/usr/bin/env bash
# The bank write path, one row per block (the product's kvreuse_ingest_batch) against the page
# prototype (layout.sql), on the same PostgreSQL and the same data, alternated:
#   benchmarks/bank-page/run.sh [calls per measurement, default 12] [rounds, default 3]
# 1. runs the REST ingestion benchmark keeping its home: 16 TP-2 banks of 8,192 slots after five
#    ingestion passes (the measured table's bloat included);
# 2. starts PostgreSQL (the embedded binaries the control plane used) on a copy of that data
#    directory; as root it runs as the `postgres` OS user, which must exist, and it needs `psql`
#    (Debian: postgresql-client);
# 3. builds the prototype and times, per round, a batch of 1,024 and one of 64 new blocks on both
#    ranks of one bank (each call its own transaction, synchronous_commit=on, one connection, warm:
#    the first two calls of each measurement are left out): as rows, as pages, as pages with a
#    hash -> slot map kept as a row per block, as pages whose batch also names the evicted hashes,
#    found by a scan of the rank's pages (pages-scan.sql), and as slot rows updated in place
#    (slot-rows.sql). KVREUSE_BANK_PAGE_LAYOUTS picks some of them.
# Prints the median wall time of a call per rank. See docs/ingestion-throughput.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
calls="${1:-12}"
rounds="${2:-3}"
psql_bin=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1 || true)
[[ -x "$psql_bin" ]] || { echo "psql is needed (Debian: apt-get install postgresql-client)" >&2; exit 2; }
./mvnw -q -pl app,benchmarks -am package -DskipTests -Djacoco.skip=true
echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
ingest=$(mktemp)
"$JAVA_HOME/bin/java" -Xmx1g -Dkvreuse.bench.keep=true -cp benchmarks/target/benchmarks.jar \
    io.kvreuse.benchmarks.rest.RestBenchmark app/target/kvreuse.jar 1000 30 ingest | tee "$ingest"
home=$(sed -n 's/^control plane home kept: //p' "$ingest")
rm -f "$ingest"
bin=$(ls -td /tmp/embedded-pg/*/bin | head -1)
work=$(mktemp -d /tmp/kvreuse-bank-page-XXXXXX)
cp -a "$home/pgdata" "$work/pgdata"
rm -rf "$home" "$work/pgdata/postmaster.pid"
port=$((20000 + RANDOM % 20000))
as=()
if [[ $(id -u) == 0 ]]; then
  chown -R postgres "$work"
  chmod o+rx "$(dirname "$bin")" "$(dirname "$(dirname "$bin")")"
  as=(runuser -u postgres --)
fi
"${as[@]}" "$bin/pg_ctl" -D "$work/pgdata" -o "-p $port -c synchronous_commit=on" -l "$work/log" -w start >/dev/null
trap '"${as[@]}" "$bin/pg_ctl" -D "$work/pgdata" -m fast stop >/dev/null; rm -rf "$work"' EXIT
psql=("$psql_bin" -h 127.0.0.1 -p "$port" -U postgres -d postgres -q)
"${psql[@]}" -v P=256 -f benchmarks/bank-page/layout.sql 2>&1 | grep -v NOTICE || true
median() {
  python3 -c '
import sys, statistics
v = [float(x) for x in sys.stdin.read().split()]
r0, r1 = v[0::2][2:], v[1::2][2:]
print(f"rank 0 {statistics.median(r0):6.2f} ms, rank 1 {statistics.median(r1):6.2f} ms (median of {len(r0)} calls)")'
}
for round in $(seq 1 "$rounds"); do
  base=$(( (round % 7) * 1024 ))
  for n in 1024 64; do
    for layout in ${KVREUSE_BANK_PAGE_LAYOUTS:-rows pages pages-scan pages-hash-map slot-rows slot-rows-scan}; do
      script=$(mktemp)
      for _ in $(seq 1 "$calls"); do cat "benchmarks/bank-page/$layout.sql"; done > "$script"
      printf '%-14s %4d blocks at slot %4d: ' "$layout" "$n" "$base"
      "${psql[@]}" -v bankno=7 -v n="$n" -v base="$base" -v P=256 -f "$script" 2>&1 \
          | grep -o 'Time: [0-9.]*' | awk '{print $2}' | median
      rm -f "$script"
    done
  done
done
