#!/usr/bin/env bash
# Makes sure Debian's chromium is at /usr/bin/chromium for the dashboard's browser tests
# (test/integration/dashboard.test.ts drives it with playwright-core), installing the package when
# it is not there and apt is usable (CI and fresh machines run as root). Prints nothing when all is
# there. playwright's own browser download is never used: the test launches this binary.
set -euo pipefail
CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "chromium is missing and apt-get is not available: install Chromium at $CHROMIUM and retry" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "chromium is missing: run 'apt-get install chromium' as root" >&2
    exit 1
  fi
fi
echo "installing chromium from Debian's packages..." >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x "$CHROMIUM" ]
