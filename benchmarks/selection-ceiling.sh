#!/usr/bin/env bash
# What a donor selection at 1,000/s would measure if its PROPOSED-lease write cost less, down to
# nothing: benchmarks/rest.sh's selection phase on four jars built from this checkout's committed
# tree (the product and three experiments), alternated in rounds:
#   product          the jar as it is;
#   empty-statement  the proposal statement sent as always (same group commit, same parameters,
#                    same round trip), but kvreuse_propose_leases admits every proposal and writes
#                    nothing: what the product's statement costs with no work in the database;
#   round-trip       each group of proposals sent as SELECT 1 instead (same group commit, same
#                    connection pool, no parameters): the floor of any write made in the database
#                    before the answer;
#   no-write         the proposal never sent (LeaseProposals answers "admitted" at once): what the
#                    selection costs without a database round trip before its answer.
# The gap between the last two is what one round trip to PostgreSQL costs a selection on this
# machine, whatever the statement does; the issue-15 targets (server-side p99 <= 2 ms, client median
# and p99 <= 1.5 x the trivial endpoint's) can be met with the lease written before the answer only
# if round-trip meets them.
#   benchmarks/selection-ceiling.sh [rounds, default 2] [rate, default 1000] [seconds, default 30]
# Builds offline from the local Maven repository (run ./mvnw package once before).
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
rounds="${1:-2}"
rate="${2:-1000}"
seconds="${3:-30}"
./mvnw -q -pl benchmarks -am package -DskipTests -Djacoco.skip=true
work=$(mktemp -d /tmp/kvreuse-selection-ceiling-XXXXXX)
trap 'rm -rf "$work"' EXIT
build() { # build NAME: the scratch tree's jar as $work/NAME.jar
  (cd "$work/src" && ./mvnw -q -o -pl app -am package -DskipTests -Djacoco.skip=true)
  cp "$work/src/app/target/kvreuse.jar" "$work/$1.jar"
}
fresh() { # a scratch copy of the committed tree (nothing stale from a target folder rides along)
  rm -rf "$work/src" && mkdir "$work/src" && git archive HEAD | tar -x -C "$work/src"
}
fresh
build product
# empty-statement: the product's kvreuse_propose_leases, same signature, with a body that admits all
migrations=db-migrations/src/main/resources/db/migration
last=$(ls "$work/src/$migrations" | sed -n 's/^V\([0-9]*\)__.*/\1/p' | sort -n | tail -1)
current=$(grep -l 'FUNCTION kvreuse_propose_leases' "$work/src/$migrations"/V*.sql | sort -V | tail -1)
python3 - "$current" "$work/src/$migrations/V$((last + 1))__experiment_empty_proposal_statement.sql" <<'SPLICE'
import re, sys
product, out = open(sys.argv[1]).read(), sys.argv[2]
start = re.search(r"CREATE (OR REPLACE )?FUNCTION kvreuse_propose_leases\(", product).end()
head = product[start:product.index("AS $$", start)]  # the parameters, up to the body; stops if it moved
open(out, "w").write("CREATE OR REPLACE FUNCTION kvreuse_propose_leases(" + head
    + "AS $$\nBEGIN\n    RETURN array_fill(TRUE, ARRAY[cardinality(lease_ids)]);\nEND;\n$$;\n")
SPLICE
build empty-statement
patch() { # patch NAME ANCHOR CODE: CODE inserted after the one line ANCHOR of LeaseProposals.java
  fresh
  python3 - "$work/src/app/src/main/java/io/kvreuse/lease/LeaseProposals.java" "$2" "$3" <<'PATCH'
import sys
path, anchor, code = sys.argv[1], sys.argv[2] + "\n", sys.argv[3]
source = open(path).read()
assert source.count(anchor) == 1, "LeaseProposals.java does not have that line once: " + anchor
open(path, "w").write(source.replace(anchor, anchor + code))
PATCH
  (cd "$work/src" && ./mvnw -q -o -pl app spotless:apply)
  build "$1"
}
# round-trip: each group written as SELECT 1, every proposal answered admitted
patch round-trip '    private Mono<boolean[]> admitAndInsert(List<Proposal> plans) {' '
        if (!plans.isEmpty()) {
            boolean[] all = new boolean[plans.size()];
            java.util.Arrays.fill(all, true);
            return db.sql("SELECT 1 AS one").fetch().first().thenReturn(all);
        }
'
# no-write: the proposal answered "admitted" without being sent
patch no-write '    public Mono<Boolean> record(Proposal p, long startByNanos) {' '
        if (p != null) {
            return Mono.just(Boolean.TRUE);
        }
'
echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$JAVA_HOME/bin/java" -version 2>&1 | head -1
for i in $(seq 1 "$rounds"); do
  for jar in product empty-statement round-trip no-write; do
    echo "== $jar, round $i, $(date -u +%H:%M:%SZ), load $(cut -d' ' -f1 /proc/loadavg)"
    "$JAVA_HOME/bin/java" -Xmx1g -Dkvreuse.bench.ingest.warmups=3 -Dkvreuse.bench.select.warmup=40 \
        -cp benchmarks/target/benchmarks.jar io.kvreuse.benchmarks.rest.RestBenchmark \
        "$work/$jar.jar" "$rate" "$seconds" | sed -n '/== measured/,$p' | grep -v '^== measured'
  done
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
