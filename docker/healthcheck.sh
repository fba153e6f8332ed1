#!/bin/sh
# The image's health check: readiness of whichever role runs here (control plane: PostgreSQL answers;
# node agent: started). SERVER_PORT when set, else the role's default port (8080, agent 8081).
if [ -n "${SERVER_PORT:-}" ]; then
  port="$SERVER_PORT"
elif [ "${KVREUSE_ROLE:-control-plane}" = agent ]; then
  port=8081
else
  port=8080
fi
exec curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${port}/actuator/health/readiness"
