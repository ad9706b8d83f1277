#!/usr/bin/env bash
# Creates .venv at the repository root (if missing) with the pinned Bumble
# version the test harness (scripts/bumble/controllers.py) was written for.
# Prints the interpreter path to use as REGIONKIT_BUMBLE_PYTHON.
#
#   bash scripts/bumble/setup.sh
#   REGIONKIT_BUMBLE_PYTHON=$PWD/.venv/bin/python swift test --filter Bumble
set -euo pipefail

BUMBLE_VERSION="0.0.236"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${REGIONKIT_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV" >&2
fi
if ! "$VENV/bin/python" -c "import bumble, sys; sys.exit(0 if bumble.__version__ == '$BUMBLE_VERSION' else 1)" 2>/dev/null; then
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "bumble==$BUMBLE_VERSION" >&2
fi
"$VENV/bin/python" -c "import bumble; assert bumble.__version__ == '$BUMBLE_VERSION', bumble.__version__" >&2
echo "$VENV/bin/python"
