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

log() { printf 'bench-compare: %s\n' "$*" >&2; }
die() { printf 'bench-compare: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive integer, got '$2'"; }

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
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
((FIXES >= 2)) || die "--fixes must be at least 2"

# --- temporary directory, and a cleanup that always stops our PostgreSQL -----------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/regionkit-bench.XXXXXX")"
chmod 755 "$WORK"   # the PostgreSQL server (another user when we are root) reads the CSVs here
PG_DATA="$WORK/pg/data" PG_BIN="" PG_STARTED=0
cleanup() {
    local status=$?
    if ((PG_STARTED)) && [[ -f "$PG_DATA/postmaster.pid" ]]; then
        log "stopping the private PostgreSQL cluster"
        if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1; then
            local pid
            pid="$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null || true)"
            if [[ "$pid" =~ ^[0-9]+$ ]]; then log "pg_ctl stop failed; killing postmaster $pid"; kill -9 "$pid" 2>/dev/null || true; fi
        fi
    fi
    if ((KEEP)); then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Privileged steps: directly as root, else through sudo when it works without a password prompt.
privileged() {
    if ((EUID == 0)); then "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo -n "$@"
    else die "need root to run: $* (run it yourself, or run this script as root or with passwordless sudo)"
    fi
}
APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null || die "apt-get not found: install $* yourself"
    if ((!APT_UPDATED)); then log "apt-get update"; privileged apt-get update -qq >/dev/null; APT_UPDATED=1; fi
    log "apt-get install $*"
    privileged env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$WORK/apt.log" 2>&1 \
        || { tail -n 20 "$WORK/apt.log" >&2; die "apt-get install $* failed"; }
}

# PostgreSQL refuses to run as root: then the cluster belongs to the 'postgres' system user.
as_pg() {
    if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}

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

pg_major() { { ls -d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null || true; } | sed -E 's|/usr/lib/postgresql/([0-9]+)/.*|\1|' | sort -n | tail -n 1; }
MAJOR="$(pg_major)"
if [[ -z "$MAJOR" ]]; then apt_install postgresql; MAJOR="$(pg_major)"; fi
[[ -n "$MAJOR" ]] || die "no PostgreSQL server found under /usr/lib/postgresql after installing it"
PG_BIN="/usr/lib/postgresql/$MAJOR/bin"
if [[ ! -f "/usr/share/postgresql/$MAJOR/extension/postgis.control" ]]; then
    apt_install "postgresql-$MAJOR-postgis-3"
fi
[[ -f "/usr/share/postgresql/$MAJOR/extension/postgis.control" ]] || die "PostGIS for PostgreSQL $MAJOR is still missing"
command -v psql >/dev/null || apt_install postgresql-client
if ((EUID == 0)); then id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' system user (from the postgresql package)"; fi

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

mkdir -p "$WORK/pg/socket"
if ((EUID == 0)); then chown -R postgres "$WORK/pg"; fi
PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log "PostgreSQL $MAJOR + PostGIS: initdb and start on 127.0.0.1:$PORT"
as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U bench --auth=trust -E UTF8 --no-locale >"$WORK/initdb.log" 2>&1 \
    || { tail -n 20 "$WORK/initdb.log" >&2; die "initdb failed"; }
PG_STARTED=1
as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/pg/server.log" -w -t 60 \
    -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$WORK/pg/socket -c fsync=off -c shared_buffers=256MB -c work_mem=64MB -c jit=off" \
    start >/dev/null || { tail -n 20 "$WORK/pg/server.log" >&2 2>/dev/null || true; die "pg_ctl start failed"; }
log "PostGIS: load, index, and run every form"
psql -X -q -h 127.0.0.1 -p "$PORT" -U bench -d postgres -v regions_csv="$WORK/regions.csv" -v fixes_csv="$WORK/fixes.csv" \
    -f "$BENCH/postgis.sql" >"$WORK/postgis.txt" 2>"$WORK/postgis.err" \
    || { cat "$WORK/postgis.err" >&2; die "the PostGIS benchmark failed"; }
as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null && PG_STARTED=0

# --- 5. the table ----------------------------------------------------------------------------
CPU="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"  # no pipe: under pipefail a SIGPIPE'd producer would end the script
MACHINE="${CPU:-unknown CPU}, nproc $(nproc), $(uname -sr), load average $(cut -d ' ' -f 1-3 /proc/loadavg); regionkit release build of $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') + PostGIS $(sed -n 's/^postgis_version|//p' "$WORK/postgis.txt"), Python $("$PY" -c 'import platform; print(platform.python_version())')"
echo
"$PY" "$BENCH/table.py" --dir "$WORK" --command "$COMMAND" --machine "$MACHINE" --date "$(date -u '+%Y-%m-%d %H:%M UTC')"
