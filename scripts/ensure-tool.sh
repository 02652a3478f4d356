#!/usr/bin/env bash
# Usage: scripts/ensure-tool.sh COMMAND DEBIAN_PACKAGE
# Makes sure COMMAND is on PATH, installing DEBIAN_PACKAGE with apt-get when it is not (through
# sudo when not root). Used for haproxy (scripts/cluster.sh, the scale-out test) and
# docker-compose (the compose test). Prints nothing when the command is already there.
# Concurrent callers (two jest workers) are serialised by a lock, and apt waits for dpkg's own.
set -euo pipefail
if [ "$#" -ne 2 ]; then
  echo "usage: $0 COMMAND DEBIAN_PACKAGE" >&2
  exit 2
fi
COMMAND="$1"
PACKAGE="$2"
if command -v "$COMMAND" >/dev/null; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "$COMMAND is missing and apt-get is not available: install $PACKAGE and retry" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "$COMMAND is missing: run 'apt-get install $PACKAGE' as root" >&2
    exit 1
  fi
fi
LOCK="${TMPDIR:-/tmp}/keyward-apt.lock"
exec 9>"$LOCK"
flock -w 600 9
# Another caller may have installed it while this one waited for the lock.
if command -v "$COMMAND" >/dev/null; then exit 0; fi
echo "installing $PACKAGE from Debian's packages..." >&2
export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-o DPkg::Lock::Timeout=300 -qq)
$SUDO apt-get "${APT_OPTS[@]}" update >/dev/null
$SUDO apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "$PACKAGE" >/dev/null
command -v "$COMMAND" >/dev/null || {
  echo "$PACKAGE was installed but $COMMAND is still not on PATH" >&2
  exit 1
}
