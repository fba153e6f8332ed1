#!/usr/bin/env bash
# One-command benchmark of the FFM binding over the NIXL emulator; results go to stdout.
# Usage: transfer-ffm/bench.sh   (from anywhere; needs Temurin 25 and gcc)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
cd "$root"
./mvnw -q -f transfer-ffm/pom.xml -Pbench -DskipTests test-compile exec:exec
