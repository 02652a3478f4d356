#!/usr/bin/env bash
# `make run`: a Redis of our own (AOF on) when KEYWARD_REDIS_URL is unset, a root key, and one
# node in the foreground. Ctrl-C stops the node and then the Redis this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
export KEYWARD_PORT="${KEYWARD_PORT:-8080}"
REDIS_PID=""
cleanup() {
  if [ -n "$REDIS_PID" ]; then
    redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
if [ -z "${KEYWARD_REDIS_URL:-}" ]; then
  REDIS_PORT="${KEYWARD_RUN_REDIS_PORT:-6379}"
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    echo "a Redis already answers on 127.0.0.1:$REDIS_PORT; using it (set KEYWARD_RUN_REDIS_PORT to start another)" >&2
  else
    mkdir -p .run/redis
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$PWD/.run/redis" \
      --appendonly yes --appendfsync everysec --save '' --daemonize no --loglevel warning \
      --logfile "$PWD/.run/redis/redis.log" &
    REDIS_PID=$!
    for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
  fi
  export KEYWARD_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
fi
ROOT_JSON=$(node dist/cli.js root create --name "make run")
ROOT_KEY=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).key)' "$ROOT_JSON")
WORKSPACE_ID=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).workspaceId)' "$ROOT_JSON")
cat <<MSG

  keyward is starting
  base URL:  http://127.0.0.1:${KEYWARD_PORT}
  root key:  ${ROOT_KEY}
  workspace: ${WORKSPACE_ID}
  dashboard: http://127.0.0.1:${KEYWARD_PORT}/dashboard
  redis:     ${KEYWARD_REDIS_URL}

  try:  curl -s http://127.0.0.1:${KEYWARD_PORT}/v1/liveness

MSG
# A person at a terminal reads log lines; anything else (a pipe, a file) gets JSON.
if [ -t 1 ]; then export KEYWARD_LOG_PRETTY="${KEYWARD_LOG_PRETTY:-1}"; fi
node dist/cli.js serve &
NODE_PID=$!
trap 'kill -TERM $NODE_PID 2>/dev/null || true' INT TERM
wait $NODE_PID || true
wait $NODE_PID 2>/dev/null || true
