#!/usr/bin/env bash
# What durable ingestion would reach if bank_block cost PostgreSQL nothing: the REST ingestion
# benchmark (benchmarks/rest.sh's ingestion phase) on the product's jar and on a scratch build whose
# last migration is kvreuse_ingest_batch with no-bank-block.sql in place of its bank_block work,
# alternated in pairs. The gap between the two is what any new bank layout can win at most; the
# second jar's figure is the ceiling the rest of the path (HTTP, the control plane, the bank lock,
# the feed row, NOTIFY, commit, index apply) sets.
#   benchmarks/bank-page/ceiling.sh [pairs, default 2]
# Builds offline from the local Maven repository (run ./mvnw package once before).
set -euo pipefail
cd "$(dirname "$0")/../.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
pairs="${1:-2}"
./mvnw -q -pl benchmarks -am package -DskipTests -Djacoco.skip=true
work=$(mktemp -d /tmp/kvreuse-ceiling-XXXXXX)
trap 'rm -rf "$work"' EXIT
# both jars from this checkout's committed tree, built in a scratch copy (a stale migration left in a
# target folder would otherwise ride along): the product as it is, then with the experiment added
# as its last migration
mkdir "$work/src"
git archive HEAD | tar -x -C "$work/src"
(cd "$work/src" && ./mvnw -q -o -pl app -am package -DskipTests -Djacoco.skip=true)
cp "$work/src/app/target/kvreuse.jar" "$work/product.jar"
migrations=db-migrations/src/main/resources/db/migration
last=$(ls "$migrations" | sed -n 's/^V\([0-9]*\)__.*/\1/p' | sort -n | tail -1)
# the product's current kvreuse_ingest_batch (its latest migration), the experiment's part spliced in
# from the parents' check up to the final statement; a function that no longer has those lines stops
# the script rather than measuring something else
current=$(grep -l 'FUNCTION kvreuse_ingest_batch' "$migrations"/V*.sql | sort -V | tail -1)
python3 - "$current" benchmarks/bank-page/no-bank-block.sql \
    "$work/src/$migrations/V$((last + 1))__experiment_no_bank_block.sql" <<'SPLICE'
import sys
product, part, out = (open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3])
function = product[product.index("CREATE OR REPLACE FUNCTION kvreuse_ingest_batch("):]
start = function.index("    IF cardinality(p_expect_hashes) > 0")
end = function.index("    SELECT EXISTS (SELECT 1 FROM agreement")
body = part[part.index("\n    ") + 1:]  # without the file's header comment
open(out, "w").write(function[:start] + body + function[end:])
SPLICE
(cd "$work/src" && ./mvnw -q -o -pl app -am package -DskipTests -Djacoco.skip=true)
cp "$work/src/app/target/kvreuse.jar" "$work/no-bank-block.jar"
echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$pairs"); do
  for jar in product no-bank-block; do
    echo "== $jar, pair $i, load $(cut -d' ' -f1 /proc/loadavg)"
    "$JAVA_HOME/bin/java" -Xmx1g -cp benchmarks/target/benchmarks.jar io.kvreuse.benchmarks.rest.RestBenchmark \
        "$work/$jar.jar" 1000 30 ingest | grep -A1 '^ingestion, measured pass'
  done
done
