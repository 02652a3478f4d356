#!/usr/bin/env bash
# `make test-containers`: the integration tests with their Redis instances started through
# testcontainers, on a Docker engine of this script's own and an image built from this machine's
# redis-server (nothing is pulled from a registry). Not part of `make test`; see docs/testing.md.
#
# Usage: scripts/test-containers.sh [--all] [JEST ARGS...]
#   default  the suites that only need plain Redis instances (CONTAINER_SUITES below, or the
#            names in KEYWARD_CONTAINER_SUITES, e.g. "liveness keys")
#   --all    every integration suite (the ones that start redis-server themselves still do)
#   JEST ARGS are passed to jest after the suite selection (e.g. -t 'liveness').
#
# dockerd runs as root with --bridge=none --iptables=false (no network or firewall changes), with
# its data-root, exec-root, socket and pidfile under .run/docker and its log in
# .run/docker/dockerd.log. It is stopped, and every container removed, when the script exits.
# overlay2 is tried first, vfs when dockerd will not start on it (KEYWARD_DOCKER_STORAGE forces one).
set -euo pipefail
cd "$(dirname "$0")/.."

# KEYWARD_CONTAINER_SUITES="liveness keys" narrows the default selection.
read -r -a CONTAINER_SUITES <<<"${KEYWARD_CONTAINER_SUITES:-keys apis http multiNode credits ratelimits bucketConformance hotPath liveness dataPlane redisClient}"

ALL=0
JEST_ARGS=()
for arg in "$@"; do
  if [ "$arg" = "--all" ]; then ALL=1; else JEST_ARGS+=("$arg"); fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "dockerd must run as root and sudo is missing: run this script as root" >&2
    exit 1
  fi
fi

scripts/ensure-tool.sh dockerd docker.io
scripts/ensure-tool.sh docker docker.io
scripts/ensure-tool.sh redis-server redis-server

RUN_DIR="$PWD/.run/docker"
DATA_ROOT="$RUN_DIR/data"
EXEC_ROOT="$RUN_DIR/exec"
PIDFILE="$RUN_DIR/dockerd.pid"
SOCKET="$RUN_DIR/docker.sock"
LOG="$RUN_DIR/dockerd.log"
export DOCKER_HOST="unix://$SOCKET"
mkdir -p "$DATA_ROOT" "$EXEC_ROOT"

dockerd_pid() {
  if [ -s "$PIDFILE" ]; then cat "$PIDFILE" 2>/dev/null || true; fi
}

stop_dockerd() {
  local pid
  pid=$(dockerd_pid)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    local ids
    ids=$(docker ps -aq 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
    $SUDO kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "dockerd ($pid) did not stop within 30 s; killing it" >&2
      $SUDO kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  $SUDO rm -f "$PIDFILE"
  # dockerd leaves its network namespace bind-mounted under the exec-root: `make clean` (rm -rf
  # .run) would fail on it.
  local mount
  awk -v root="$EXEC_ROOT/" 'index($5, root) == 1 { print $5 }' /proc/self/mountinfo |
    sort -r | while read -r mount; do $SUDO umount "$mount" 2>/dev/null || true; done
}

BUILD_DIR=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local status=$?
  [ -z "$BUILD_DIR" ] || $SUDO rm -rf "$BUILD_DIR"
  stop_dockerd
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A dockerd left behind by an interrupted run of this script is stopped first.
if [ -n "$(dockerd_pid)" ]; then stop_dockerd; fi

start_dockerd() {
  local driver="$1"
  local args=(--bridge=none --iptables=false --ip6tables=false
    --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" --pidfile "$PIDFILE" -H "$DOCKER_HOST")
  [ -z "$driver" ] || args+=(--storage-driver "$driver")
  echo "--- dockerd ${args[*]} ($(date -u +%FT%TZ))" >>"$LOG"
  $SUDO dockerd "${args[@]}" >>"$LOG" 2>&1 &
  local launcher=$!
  for _ in $(seq 1 150); do
    if docker version >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$launcher" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "dockerd did not come up${driver:+ with storage driver $driver}; last lines of $LOG:" >&2
  tail -n 15 "$LOG" >&2
  stop_dockerd
  return 1
}

STARTED_AT=$(date +%s)
if [ -n "${KEYWARD_DOCKER_STORAGE:-}" ]; then
  start_dockerd "$KEYWARD_DOCKER_STORAGE"
elif ! start_dockerd ""; then
  echo "retrying with the vfs storage driver" >&2
  start_dockerd vfs
fi
echo "dockerd is up ($(docker info --format '{{.ServerVersion}}, storage {{.Driver}}')); log: $LOG"

# The image: this machine's redis-server, its shared libraries (ldd) and a minimal /etc.
REDIS_BIN=$(readlink -f "$(command -v redis-server)")
REDIS_SUM=$(sha256sum "$REDIS_BIN" | cut -c1-12)
IMAGE="keyward-test-redis:$REDIS_SUM"
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "building $IMAGE from $REDIS_BIN ($(redis-server --version | cut -d' ' -f3))"
  BUILD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/keyward-redis-image.XXXXXX")
  ROOTFS="$BUILD_DIR/rootfs"
  mkdir -p "$ROOTFS"/{usr/local/bin,etc,data,tmp}
  chmod 1777 "$ROOTFS/tmp"
  # Named redis-server: the binary picks its mode from argv[0] (Debian links it to redis-check-rdb).
  cp "$REDIS_BIN" "$ROOTFS/usr/local/bin/redis-server"
  while read -r lib; do
    mkdir -p "$ROOTFS$(dirname "$lib")"
    cp -L "$lib" "$ROOTFS$lib"
  done < <(ldd "$REDIS_BIN" | grep -o '/[^ ]*' | sort -u)
  printf 'root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
    >"$ROOTFS/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOTFS/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$ROOTFS/etc/nsswitch.conf"
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$ROOTFS/etc/hosts"
  tar -C "$ROOTFS" -cf "$BUILD_DIR/rootfs.tar" .
  docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    --change 'WORKDIR /data' \
    --change 'CMD ["redis-server"]' \
    --message "redis-server from $REDIS_BIN" \
    "$BUILD_DIR/rootfs.tar" "$IMAGE" >/dev/null
  $SUDO rm -rf "$BUILD_DIR"
  BUILD_DIR=""
fi
docker run --rm --network none "$IMAGE" redis-server --version >/dev/null

if [ "$ALL" = 1 ]; then
  SELECTION=(test/integration)
else
  SELECTION=("test/integration/($(
    IFS='|'
    echo "${CONTAINER_SUITES[*]}"
  ))\\.test\\.ts$")
fi

# TESTCONTAINERS_HOST_OVERRIDE: inside a container (/.dockerenv) testcontainers otherwise looks for
# the gateway of the "bridge" network, which --bridge=none does not create.
echo "jest ${SELECTION[*]} ${JEST_ARGS[*]:-} (Redis from $IMAGE, host network)"
STATUS=0
KEYWARD_TEST_REDIS=containers \
  KEYWARD_TEST_REDIS_IMAGE="$IMAGE" \
  KEYWARD_TEST_REDIS_NETWORK=host \
  TESTCONTAINERS_RYUK_DISABLED=true \
  TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
  npx jest --ci "${SELECTION[@]}" "${JEST_ARGS[@]}" || STATUS=$?
echo "test-containers: jest exited $STATUS after $(($(date +%s) - STARTED_AT)) s"
exit "$STATUS"
