#!/bin/sh
# The image's entry point: starts kvreuse in the role KVREUSE_ROLE names (control-plane by default).
#
# Control plane without KVREUSE_BOOTSTRAP_TOKEN: the first operator token is generated once and kept
# in $KVREUSE_HOME/bootstrap-token (mode 600, on the home volume), so a plain `docker compose up`
# needs no variable. Read it with:
#   docker compose -f docker/compose.yaml exec control-plane cat /var/lib/kvreuse/bootstrap-token
# Node agent: KVREUSE_AGENT_TOKEN is required; without it the container stops at once and says why.
set -eu

home="${KVREUSE_HOME:-/var/lib/kvreuse}"
role="${KVREUSE_ROLE:-control-plane}"

if [ "$role" = agent ]; then
  if [ -z "${KVREUSE_AGENT_TOKEN:-}" ]; then
    echo "kvreuse: KVREUSE_AGENT_TOKEN is not set: mint an AGENT token for this host first (README, \"Docker\")" >&2
    exit 64
  fi
elif [ -z "${KVREUSE_BOOTSTRAP_TOKEN:-}" ]; then
  file="$home/bootstrap-token"
  if [ ! -s "$file" ]; then
    mkdir -p "$home"
    (umask 077 && printf 'kvr_%s\n' "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" > "$file.new" && mv "$file.new" "$file")
    echo "kvreuse: generated the first operator token in $file" >&2
  fi
  KVREUSE_BOOTSTRAP_TOKEN=$(cat "$file")
  export KVREUSE_BOOTSTRAP_TOKEN
fi

exec java --enable-native-access=ALL-UNNAMED -jar "${KVREUSE_JAR:-/opt/kvreuse/kvreuse.jar}" "$@"
