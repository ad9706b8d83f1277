#!/usr/bin/env bash
# Runs every RegionKit test, installing what the tests need first. CI (.ci/run) calls exactly this.
#   - Debian packages: zlib and SQLite headers (build), tshark (btsnoop checks), gpsd + gpsd-clients (gpsfake)
#   - a Python venv with Bumble (virtual Bluetooth controllers for the HCI end-to-end tests)
# Tests whose tool could not be installed are reported as skipped, with the reason.
# Usage: ./scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
command -v gpsfake >/dev/null 2>&1 || missing+=(gpsd gpsd-clients)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
      || echo "== WARNING: apt-get could not install ${missing[*]}; the tests needing them will be skipped"
  else
    echo "== WARNING: not root, cannot apt-get install ${missing[*]}; the tests needing them will be skipped"
  fi
fi

echo "== Bumble virtual controllers (Python venv at .venv)"
if REGIONKIT_BUMBLE_PYTHON="$(bash scripts/bumble/setup.sh)"; then
  export REGIONKIT_BUMBLE_PYTHON
else
  echo "== WARNING: Bumble could not be installed; the HCI end-to-end tests will be skipped"
fi

# The real recorded data the tests read in place (override with REGIONKIT_FIXTURES).
export REGIONKIT_FIXTURES="${REGIONKIT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
[ -d "$REGIONKIT_FIXTURES" ] || echo "== WARNING: fixtures not found at $REGIONKIT_FIXTURES: tests that need them will be skipped"

echo "== $(swift --version 2>&1 | head -1)"
swift build --build-tests
swift test "$@"
