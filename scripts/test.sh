#!/usr/bin/env bash
# Runs every RegionKit test, installing what the tests need first. CI (.ci/run) calls exactly this.
# Usage: ./scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== swift $(swift --version 2>&1 | head -1)"
# The real recorded data the tests read in place (override with REGIONKIT_FIXTURES).
export REGIONKIT_FIXTURES="${REGIONKIT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
if [ ! -d "$REGIONKIT_FIXTURES" ]; then
  echo "== WARNING: fixtures not found at $REGIONKIT_FIXTURES: tests that need them will be reported as skipped"
fi

swift build --build-tests
swift test "$@"
