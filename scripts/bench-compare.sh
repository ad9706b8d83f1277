#!/usr/bin/env bash
# RegionKit side by side with the tools users pick today, in one run (issue 6, item 2):
#   1. the same 1,000,000 iBeacon advertising reports parsed by RegionKit (regionkit bench parse:
#      decode, and the full ingest path into MonitoringEngine) and by the Python parsers
#      beacontools (parse_packet) and ibeacon-ble (iBeaconParser().parse);
#   2. the same 100,000 circular regions and 20,000 fixes through RegionKit (regionkit bench
#      geofence: spatial index and MonitoringEngine) and through PostgreSQL + PostGIS in a private
#      cluster on a loopback port, in index-friendly forms (scripts/bench/postgis.sql says which).
# Prints one table: absolute figures, ratios RegionKit ÷ peer, whether every side found the same
# iBeacons and containing (fix, region) pairs, the machine, date and command.
#
# Installs what is missing: a venv .venv-bench with the pinned peers (scripts/bench/requirements.txt),
# Debian's postgresql and postgresql-<major>-postgis-3. Builds regionkit in release mode.
#
#   scripts/bench-compare.sh            full run (1M reports, 100k regions, 20k fixes)
#   scripts/bench-compare.sh --quick    fast check (100k reports, 10k regions, 5k fixes)
#
# Options: --reports N --regions N --fixes N --seed N, --regionkit PATH (use that binary instead of
# building), --keep (keep the temporary directory for inspection). Exit status 1 when a step fails
# or when the sides disagree on the results.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/scripts/bench"
COMMAND="scripts/bench-compare.sh${*:+ $*}"
REPORTS=1000000 REGIONS=100000 FIXES=20000 SEED=6 KEEP=0 REGIONKIT=""

BENCH_NAME=bench-compare
# shellcheck source=lib/private-postgres.sh
source "$ROOT/scripts/lib/private-postgres.sh"

while (($#)); do
    case "$1" in
        --quick) REPORTS=100000 REGIONS=10000 FIXES=5000 ;;
        --reports|--regions|--fixes|--seed)
            (($# >= 2)) || die "$1 needs a value"
            positive "$1" "$2"
            case "$1" in --reports) REPORTS=$2 ;; --regions) REGIONS=$2 ;; --fixes) FIXES=$2 ;; --seed) SEED=$2 ;; esac
            shift ;;
        --regionkit) (($# >= 2)) || die "--regionkit needs a path"; REGIONKIT=$2; shift ;;
        --keep) KEEP=1 ;;
        -h|--help) usage 20; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
((FIXES >= 2)) || die "--fixes must be at least 2"

# --- temporary directory, and a cleanup that always stops our PostgreSQL -----------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/regionkit-bench.XXXXXX")"
chmod 755 "$WORK"   # the PostgreSQL server (another user when we are root) reads the CSVs here
PG_DATA="$WORK/pg/data" PG_BIN="" PG_STARTED=0
bench_traps

# --- 1. peers and tools ----------------------------------------------------------------------
command -v python3 >/dev/null || apt_install python3
VENV="$ROOT/.venv-bench"
if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV"
    python3 -m venv "$VENV" 2>/dev/null || { apt_install python3-venv; rm -rf "$VENV"; python3 -m venv "$VENV"; }
fi
if ! "$VENV/bin/python" - "$BENCH/requirements.txt" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
pins = [line.split("==") for line in open(sys.argv[1]) if "==" in line and not line.startswith("#")]
sys.exit(any(version(name) != wanted.strip() for name, wanted in pins))
EOF
then
    log "pip install -r scripts/bench/requirements.txt (beacontools, ibeacon-ble)"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$BENCH/requirements.txt" || die "pip install of the peers failed"
fi
PY="$VENV/bin/python"

pg_find_or_install
if [[ ! -f "/usr/share/postgresql/$MAJOR/extension/postgis.control" ]]; then
    apt_install "postgresql-$MAJOR-postgis-3"
fi
[[ -f "/usr/share/postgresql/$MAJOR/extension/postgis.control" ]] || die "PostGIS for PostgreSQL $MAJOR is still missing"

if [[ -z "$REGIONKIT" ]]; then
    log "swift build -c release --product regionkit"
    (cd "$ROOT" && swift build -c release --product regionkit >"$WORK/build.log" 2>&1) \
        || { tail -n 30 "$WORK/build.log" >&2; die "release build failed"; }
    REGIONKIT="$ROOT/.build/release/regionkit"
fi
[[ -x "$REGIONKIT" ]] || die "regionkit binary not found at $REGIONKIT"

# --- 2. inputs (seeded) ----------------------------------------------------------------------
log "generating $REPORTS advertising reports, $REGIONS regions, $FIXES fixes (seed $SEED)"
"$PY" "$BENCH/generate.py" reports --count "$REPORTS" --seed "$SEED" --out "$WORK/reports.hci"
"$PY" "$BENCH/generate.py" geofence --regions "$REGIONS" --fixes "$FIXES" --seed "$SEED" \
    --regions-out "$WORK/regions.csv" --fixes-out "$WORK/fixes.csv"
chmod 644 "$WORK/regions.csv" "$WORK/fixes.csv"

# --- 3. parsing: RegionKit, then each peer (one after the other, one core each) ----------------
log "RegionKit: bench parse"
"$REGIONKIT" bench parse --reports "$WORK/reports.hci" --json >"$WORK/rk-parse.json"
log "beacontools: parse_packet over $REPORTS reports (the slow one)"
"$PY" "$BENCH/peers_parse.py" --reports "$WORK/reports.hci" --only beacontools >"$WORK/peers.jsonl"
log "ibeacon-ble: iBeaconParser().parse"
"$PY" "$BENCH/peers_parse.py" --reports "$WORK/reports.hci" --only ibeacon-ble >>"$WORK/peers.jsonl"

# --- 4. geofencing: RegionKit, then PostGIS in a private cluster ----------------------------
log "RegionKit: bench geofence"
"$REGIONKIT" bench geofence --regions "$WORK/regions.csv" --fixes "$WORK/fixes.csv" --json >"$WORK/rk-geofence.json"

PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log "PostgreSQL $MAJOR + PostGIS: initdb and start on 127.0.0.1:$PORT"
pg_private_start "$PORT" bench "-c shared_buffers=256MB -c work_mem=64MB -c jit=off"
log "PostGIS: load, index, and run every form"
psql -X -q -h 127.0.0.1 -p "$PORT" -U bench -d postgres -v regions_csv="$WORK/regions.csv" -v fixes_csv="$WORK/fixes.csv" \
    -f "$BENCH/postgis.sql" >"$WORK/postgis.txt" 2>"$WORK/postgis.err" \
    || { cat "$WORK/postgis.err" >&2; die "the PostGIS benchmark failed"; }
pg_private_stop

# --- 5. the table ----------------------------------------------------------------------------
CPU="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"  # no pipe: under pipefail a SIGPIPE'd producer would end the script
MACHINE="${CPU:-unknown CPU}, nproc $(nproc), $(uname -sr), load average $(cut -d ' ' -f 1-3 /proc/loadavg); regionkit release build of $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') + PostGIS $(sed -n 's/^postgis_version|//p' "$WORK/postgis.txt"), Python $("$PY" -c 'import platform; print(platform.python_version())')"
echo
"$PY" "$BENCH/table.py" --dir "$WORK" --command "$COMMAND" --machine "$MACHINE" --date "$(date -u '+%Y-%m-%d %H:%M UTC')"
