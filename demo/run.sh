#!/usr/bin/env bash
# The kvreuse demo in one command: a control plane on the embedded PostgreSQL, a node agent on the
# NIXL emulator, simulated decode and prefill engines serving a multi-turn conversation with reuse
# off and then on, an engine crash cleaned up by the operator, and the OFF-vs-ON report.
#
#   demo/run.sh [--keep-running] [--port N] [--home DIR] [--kv-events] | --help
#
# Builds app/target/kvreuse.jar and sim/target/kvreuse-sim.jar (the simulated engines and the demo)
# first when either is missing (KVREUSE_JAR names another control-plane jar).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: demo/run.sh [--keep-running] [--port N] [--home DIR] [--kv-events]
  --keep-running  after the report, keep the control plane, agent and engines running with
                  background conversations (dashboard usable) until Ctrl-C
  --port N        the control plane's port (default 8080; any free port if taken; 0 = any)
  --home DIR      keep the embedded database and logs in DIR (default: a temporary
                  directory, removed at the end)
  --kv-events     decode engines publish their banks as vLLM KVEvents over ZMQ, which the
                  node agent bridges, instead of calling the events API
  -h, --help      print this and exit
USAGE
}

# help needs neither Java nor a build
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
java="$JAVA_HOME/bin/java"
[ -x "$java" ] || { echo "no Java 25 at $JAVA_HOME: set JAVA_HOME to a Temurin 25 JDK" >&2; exit 2; }

jar=${KVREUSE_JAR:-$root/app/target/kvreuse.jar}
sim=$root/sim/target/kvreuse-sim.jar
if [ ! -f "$jar" ] || [ ! -f "$sim" ]; then
  echo "building $jar and $sim (once) ..."
  (cd "$root" && ./mvnw -q -DskipTests package)
fi

# the demo runs from the simulation's jar and starts the control plane and the agent from "$jar"
exec "$java" --enable-native-access=ALL-UNNAMED -jar "$sim" --jar "$jar" "$@"
