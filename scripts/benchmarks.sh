#!/usr/bin/env bash
# Every measuring instrument of RegionKit, in one run, with the machine and commit they ran on
# (the tables in BENCHMARKS.md come from this script).
#
#   scripts/benchmarks.sh            everything (about 15 minutes on 2 cores)
#   scripts/benchmarks.sh --quick    smaller populations and sweeps (a few minutes)
#   scripts/benchmarks.sh --no-peers skip the side-by-side comparison (no pip/apt/PostgreSQL)
#
# Sections: throughput (bench ingest / memory / beacons / latency), detection quality in simulation (eval
# detection), on real gateway recordings (eval replay), distance (eval distance), and the
# side-by-side run against beacontools, ibeacon-ble and PostGIS (scripts/bench-compare.sh).
# Fixtures are read from $REGIONKIT_FIXTURES (default ../shared/fixtures).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

QUICK=0 PEERS=1
for argument in "$@"; do
    case "$argument" in
        --quick) QUICK=1 ;;
        --no-peers) PEERS=0 ;;
        -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "benchmarks.sh: unknown argument '$argument' (see --help)" >&2; exit 2 ;;
    esac
done
FIXTURES=${REGIONKIT_FIXTURES:-../shared/fixtures}
[[ -d "$FIXTURES/beacon-runs" && -d "$FIXTURES/rssi-distance" ]] || {
    echo "benchmarks.sh: fixtures not found in $FIXTURES (set REGIONKIT_FIXTURES)" >&2; exit 1; }

swift build -c release --product regionkit >&2
RK=.build/release/regionkit
section() { printf '\n## %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

echo "# RegionKit benchmarks"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)   commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem:/ {print $2}') GB, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "swift: $(swift --version 2>/dev/null | head -1)"

if ((QUICK)); then
    section "Ingest throughput" "$RK" bench ingest --beacons 10,1000,100000 --reports 1000000 --repeats 2
    section "Memory per tracked beacon" "$RK" bench memory --beacons 100000
    section "GET /v1/beacons listing" "$RK" bench beacons --beacons 10000 --repeats 3
    section "GET /v1/scanners listing" "$RK" bench scanners --beacons 10000 --repeats 3
    section "Report → delegate latency" "$RK" bench latency --reports 500
    section "Detection in simulation" "$RK" eval detection --hours 100
else
    section "Ingest throughput" "$RK" bench ingest
    section "Memory per tracked beacon" "$RK" bench memory
    section "GET /v1/beacons listing" "$RK" bench beacons
    section "GET /v1/scanners listing" "$RK" bench scanners
    section "Report → delegate latency" "$RK" bench latency
    section "Detection in simulation" "$RK" eval detection
fi
if command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; then
    if ((QUICK)); then
        section "MQTT presence hub" "$RK" bench mqtt --messages 50000 --samples 100
    else
        section "MQTT presence hub" "$RK" bench mqtt
    fi
else
    echo "## MQTT presence hub: SKIPPED (mosquitto not installed: apt-get install mosquitto mosquitto-clients)"
fi
section "Detection on real gateway recordings" "$RK" eval replay "$FIXTURES"/beacon-runs/*.json.gz
section "Distance (cross-file)" "$RK" eval distance "$FIXTURES"/rssi-distance/*.csv
if ((PEERS)); then
    if ((QUICK)); then
        section "Side by side" scripts/bench-compare.sh --quick --regionkit "$RK"
    else
        section "Side by side" scripts/bench-compare.sh --regionkit "$RK"
    fi
fi
