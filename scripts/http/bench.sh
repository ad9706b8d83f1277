#!/usr/bin/env bash
# HTTP API load on loopback against a release `regionkit run` (1,000 regions, the museum simulation
# at 8x): wrk on GET /v1/regions and /v1/beacons, SSE fan-out to 200 clients, RSS with the server
# on and off. Needs wrk (Debian) and python3. Prints the figures for BENCHMARKS.md.
# Usage: scripts/http/bench.sh [DURATION_S]
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
command -v wrk >/dev/null || { echo "wrk is missing (apt-get install wrk)"; exit 1; }
swift build -c release --product regionkit >/dev/null
bin=.build/release/regionkit
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
write_config() {  # $1 = with http block (1/0)
  {
    echo "store: $work/store-$1.sqlite"
    echo "regions:"
    echo "  - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}"
    for i in $(seq 1 999); do echo "  - {identifier: r$i, uuid: 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0, major: $i}"; done
    echo "sources:"
    echo "  - simulator: {scenario: museum, speed: 8, repeat: true}"
    [ "$1" = 1 ] && echo "http: {listen: \"127.0.0.1:$port\", public: true}"
    true
  } > "$work/config-$1.yaml"
}
rss() { awk '/VmRSS/ {print $2}' /proc/$1/status; }

write_config 0
$bin run --config "$work/config-0.yaml" --log-level error & pid=$!
sleep 15; off=$(rss $pid); kill $pid; wait $pid 2>/dev/null || true

write_config 1
export REGIONKIT_API_TOKEN="bench-$RANDOM-$RANDOM"   # writes (the SSE load's state requests); reads are public
$bin run --config "$work/config-1.yaml" --log-level error & pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
sleep 14; on=$(rss $pid)
echo "== RSS after 15 s: server off ${off} KiB, on (idle) ${on} KiB"
for route in /v1/regions /v1/beacons; do
  echo "== wrk -t2 -c32 -d${duration}s GET $route ($(curl -s "http://127.0.0.1:$port$route" | wc -c) bytes)"
  wrk -t2 -c32 -d"${duration}s" --latency "http://127.0.0.1:$port$route" | grep -E "Requests/sec|Latency|99%|50%|Non-2xx"
done
echo "== SSE fan-out: 200 clients for 20 s, 20 state requests/s on museum (each logs an event)"
python3 scripts/http/sse_fanout.py "$port" 200 20 museum 20
echo "== RSS after the load: $(rss $pid) KiB"
