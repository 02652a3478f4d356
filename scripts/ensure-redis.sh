#!/usr/bin/env bash
# Makes sure redis-server and redis-cli are on PATH, installing Debian's packages when they are
# not and apt is usable (CI and fresh machines run as root). Prints nothing when all is there.
set -euo pipefail
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "redis-server is missing and apt-get is not available: install Redis 7 and retry" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "redis-server is missing: run 'apt-get install redis-server' as root" >&2
    exit 1
  fi
fi
echo "installing redis-server from Debian's packages..." >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq redis-server redis-tools >/dev/null
# The package may start a system-wide Redis on 6379; keyward's commands start their own.
command -v redis-server >/dev/null
