#!/usr/bin/env bash
# `make bench`: compiles bench/ (its own tsconfig, output in .run/bench-build) and runs the driver,
# which starts its own Redis servers, keyward node and comparison servers on 127.0.0.1 and stops
# them all when it ends. Bounded: the whole run is killed after BENCH_TIMEOUT seconds (170), and
# anything the driver started that is still alive then is stopped here by its recorded pid.
#
# `make profile` runs the same way with the argument `profile` (bench/profile.ts, output in
# .run/profile).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DRIVER_NAME="${1:-run}"
case "$DRIVER_NAME" in
  run) OUT="$ROOT/.run/bench" ;;
  profile) OUT="$ROOT/.run/profile" ;;
  *) echo "bench: unknown driver $DRIVER_NAME (run or profile)" >&2; exit 2 ;;
esac
PIDS="$OUT/pids"
mkdir -p "$OUT"
rm -f "$PIDS"

cleanup() {
  # Last resort: the driver stops its children itself; this catches a driver killed with SIGKILL.
  if [ -s "$PIDS" ]; then
    while read -r pid; do
      [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
    done <"$PIDS"
    sleep 0.5
    while read -r pid; do
      [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    done <"$PIDS"
    rm -f "$PIDS"
  fi
}
trap cleanup EXIT

command -v redis-server >/dev/null || { echo "bench: redis-server is missing (make redis)" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "bench: redis-benchmark is missing (apt-get install redis-tools)" >&2; exit 1; }
[ -f dist/cli.js ] || { echo "bench: dist/ is missing (make build)" >&2; exit 1; }

rm -rf .run/bench-build
npx tsc -p bench/tsconfig.json

# The driver handles SIGINT/SIGTERM by stopping every process it started; timeout sends SIGTERM
# and, 10 s later, SIGKILL.
KEYWARD_ROOT="$ROOT" timeout --kill-after=10 "${BENCH_TIMEOUT:-170}" \
  node ".run/bench-build/bench/$DRIVER_NAME.js" &
DRIVER=$!
trap 'kill -TERM $DRIVER 2>/dev/null || true' INT TERM
status=0
wait "$DRIVER" || status=$?
# A signal interrupts the first wait; wait again for the driver's own clean-up to finish.
if kill -0 "$DRIVER" 2>/dev/null; then wait "$DRIVER" || status=$?; fi
if [ "$status" -eq 124 ]; then echo "bench: timed out after ${BENCH_TIMEOUT:-170} s" >&2; fi
exit "$status"
