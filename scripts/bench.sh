#!/usr/bin/env bash
# `make bench`: compiles bench/ (its own tsconfig, output in .run/bench-build) and runs the driver,
# which starts its own Redis servers, keyward node and comparison servers on 127.0.0.1 and stops
# them all when it ends. Bounded: the driver is killed after BENCH_TIMEOUT seconds (420), and
# anything the driver started that is still alive then is stopped here by its recorded pid.
#
# The old build: BENCH_BASE names a commit (HEAD~1 unless set; `none` skips it). It is checked out
# in a scratch git worktree under a temp folder, given node_modules (a symlink to this checkout's
# when its package-lock.json is the same, else its own npm install) and built; the driver measures
# its node beside the new one. The worktree and the folder are removed when this script ends, on
# failure and Ctrl-C too. A base that cannot be built is reported by the driver, not fatal.
#
# `make profile` runs the same way with the argument `profile` (bench/profile.ts, output in
# .run/profile). `make layout-figures` with the argument `layout` (bench/layout.ts: one workspace
# on Redis Clusters of this tree and of the previous layout; figures in .run/bench/layout.json,
# its logs and pids in .run/layout): its old build is c62d6b0 unless BENCH_BASE is set, and it is
# killed after BENCH_TIMEOUT seconds (1200). `make bench-compare` with the argument `compare`
# (bench/compare.ts: fresh nodes of this tree and of BENCH_BASE every round, with a control; its
# report in .run/bench/compare.md and compare.json, its logs and pids in .run/compare): killed
# after BENCH_TIMEOUT seconds (600). `make bench-vault` with the argument `vault` (bench/vault.ts:
# what sealing and opening recoverable keys cost, on one node of this tree; its report in
# .run/bench/vault.md and vault.json, its logs and pids in .run/vault): no old build, killed after
# BENCH_TIMEOUT seconds (300). `make bench-clickhouse` with the argument `clickhouse`
# (bench/clickhouse.ts: issue 24's figures with its own clickhouse-server; its report in
# .run/bench/clickhouse.md and clickhouse.json, its logs, pids and ClickHouse's data in
# .run/clickhouse): no old build, killed after BENCH_TIMEOUT seconds (600). `make bench-floor` with
# the argument `floor` (bench/floor.ts: a node against the floor of its fast check, user and system
# CPU apart; its report in .run/bench/floor.md and floor.json, its logs and pids in .run/floor): no
# old build, killed after BENCH_TIMEOUT seconds (300).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DRIVER_NAME="${1:-run}"
case "$DRIVER_NAME" in
  run) OUT="$ROOT/.run/bench" ;;
  profile) OUT="$ROOT/.run/profile" ;;
  layout) OUT="$ROOT/.run/layout" ;;
  compare) OUT="$ROOT/.run/compare" ;;
  vault) OUT="$ROOT/.run/vault" ;;
  clickhouse) OUT="$ROOT/.run/clickhouse" ;;
  floor) OUT="$ROOT/.run/floor" ;;
  *) echo "bench: unknown driver $DRIVER_NAME (run, profile, layout, compare, vault, clickhouse or floor)" >&2; exit 2 ;;
esac
PIDS="$OUT/pids"
mkdir -p "$OUT"
rm -f "$PIDS"
SCRATCH=""

remove_base() {
  [ -n "$SCRATCH" ] || return 0
  if [ -d "$SCRATCH/app" ]; then
    git worktree remove --force "$SCRATCH/app" >/dev/null 2>&1 || true
  fi
  rm -rf "$SCRATCH"
  git worktree prune >/dev/null 2>&1 || true
  SCRATCH=""
}

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
  remove_base
}
trap cleanup EXIT
# Until the driver runs, Ctrl-C or SIGTERM ends the script through its EXIT trap.
trap 'exit 130' INT TERM

command -v redis-server >/dev/null || { echo "bench: redis-server is missing (make redis)" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "bench: redis-benchmark is missing (apt-get install redis-tools)" >&2; exit 1; }
[ -f dist/cli.js ] || { echo "bench: dist/ is missing (make build)" >&2; exit 1; }

rm -rf .run/bench-build
npx tsc -p bench/tsconfig.json
# Code of src/ compiled with the driver finds its Lua scripts beside it, as dist/ does.
ln -s ../../lua .run/bench-build/lua

BASE_ENV=()
# The layout figures compare with the last release of the previous layout (docs/redis.md,
# "Upgrading the layout"; test/support/previousRelease.ts).
DEFAULT_BASE=HEAD~1
# The run of record took 256 s with the leases step (issue 27): room for a slow machine.
DEFAULT_TIMEOUT=420
if [ "$DRIVER_NAME" = vault ] || [ "$DRIVER_NAME" = profile ] || [ "$DRIVER_NAME" = floor ]; then
  DEFAULT_TIMEOUT=300
fi
if [ "$DRIVER_NAME" = layout ]; then DEFAULT_BASE=c62d6b0 DEFAULT_TIMEOUT=1200; fi
if [ "$DRIVER_NAME" = compare ]; then DEFAULT_TIMEOUT=600; fi
if [ "$DRIVER_NAME" = clickhouse ]; then DEFAULT_TIMEOUT=600; fi
TIMEOUT="${BENCH_TIMEOUT:-$DEFAULT_TIMEOUT}"
BASE_REF="${BENCH_BASE:-$DEFAULT_BASE}"
# profile, vault, clickhouse and floor measure this tree alone: no old build.
if [ "$DRIVER_NAME" != profile ] && [ "$DRIVER_NAME" != vault ] && [ "$DRIVER_NAME" != clickhouse ] &&
  [ "$DRIVER_NAME" != floor ] && [ "$BASE_REF" != none ]; then
  BASE_COMMIT="$(git rev-parse --verify --quiet "$BASE_REF^{commit}")" || {
    echo "bench: BENCH_BASE=$BASE_REF is not a commit here (BENCH_BASE=none to skip the old build)" >&2
    exit 2
  }
  SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/keyward-bench-base.XXXXXX")"
  started=$SECONDS
  echo "bench: old build: $BASE_REF ($(git rev-parse --short "$BASE_COMMIT")) in a scratch worktree" >&2
  base_error=""
  modules=shared
  if ! git worktree add --detach --quiet "$SCRATCH/app" "$BASE_COMMIT" >"$OUT/base-build.log" 2>&1; then
    base_error="git worktree add failed (see ${OUT#"$ROOT"/}/base-build.log)"
  elif node scripts/same-packages.mjs "$SCRATCH/app/package-lock.json" package-lock.json &&
    [ -d node_modules ]; then
    # Same packages (whichever other platforms' bindings either lock lists): this checkout's
    # node_modules serve both builds.
    ln -s "$(readlink -f node_modules)" "$SCRATCH/app/node_modules"
  else
    modules=installed
    echo "bench: old build: its package-lock.json differs, npm install in the scratch worktree" >&2
    (cd "$SCRATCH/app" && timeout 300 npm install --no-audit --no-fund) >>"$OUT/base-build.log" 2>&1 ||
      base_error="npm install failed (see ${OUT#"$ROOT"/}/base-build.log)"
  fi
  if [ -z "$base_error" ]; then
    (cd "$SCRATCH/app" && timeout 180 npm run --silent build) >>"$OUT/base-build.log" 2>&1 ||
      base_error="its build failed (see ${OUT#"$ROOT"/}/base-build.log)"
  fi
  [ -z "$base_error" ] || echo "bench: old build: $base_error" >&2
  echo "bench: old build ready in $((SECONDS - started)) s" >&2
  BASE_ENV=(
    BENCH_BASE_REF="$BASE_REF"
    BENCH_BASE_COMMIT="$(git rev-parse --short "$BASE_COMMIT")"
    BENCH_BASE_APP="$SCRATCH/app"
    BENCH_BASE_MODULES="$modules"
    BENCH_BASE_ERROR="$base_error"
  )
fi

# The driver handles SIGINT/SIGTERM by stopping every process it started; timeout sends SIGTERM
# and, 10 s later, SIGKILL.
# The driver is told its limit (BENCH_TIMEOUT) so that it can stop short of it.
env KEYWARD_ROOT="$ROOT" BENCH_TIMEOUT="$TIMEOUT" "${BASE_ENV[@]}" timeout --kill-after=10 "$TIMEOUT" \
  node ".run/bench-build/bench/$DRIVER_NAME.js" &
DRIVER=$!
trap 'kill -TERM $DRIVER 2>/dev/null || true' INT TERM
status=0
wait "$DRIVER" || status=$?
# A signal interrupts the first wait; wait again for the driver's own clean-up to finish.
if kill -0 "$DRIVER" 2>/dev/null; then wait "$DRIVER" || status=$?; fi
if [ "$status" -eq 124 ]; then echo "bench: timed out after $TIMEOUT s" >&2; fi
exit "$status"
