#!/usr/bin/env bash
# One `GET /v1/regions` at a time against a release `regionkit run` with N regions (the museum
# simulation at 8x, one UUID region plus N-1 per-major regions, as scripts/http/bench.sh):
# the body's size, then the best and median of 10 sequential requests after a 3 s warm-up.
# Give two binaries to compare them side by side (run alternately; the machine is noisy).
# QUERIES (space-separated) are the listings timed, "-" the whole one: by default the whole
# listing, the dashboard's first page, a page from the middle and a prefix (a daemon before pages
# answers each with the whole listing).
# NAME (default r) begins every identifier but the museum's: NAME=café-salle- for non-ASCII ones.
# WARMUP (default 3) seconds between the daemon's start and the first request: at 100,000 regions
# the start's states are still being written after 3 s (give 20).
# Usage: [QUERIES="- ?limit=200"] [NAME=r] scripts/http/regions-listing.sh REGIONS BINARY [BINARY...]
#   e.g. scripts/http/regions-listing.sh 10000 /tmp/regionkit-before .build/release/regionkit
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 REGIONS BINARY [BINARY...]" >&2; exit 2; }
n=$1; shift
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "REGIONS must be a positive integer, not '$n'" >&2; exit 2; }
name=${NAME:-r}
queries=${QUERIES:-"- ?limit=200 ?limit=200&cursor=$name$((n / 2)) ?prefix=$name$((n / 3))"}
command -v curl >/dev/null || { echo "curl is missing (apt-get install curl)" >&2; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
for bin in "$@"; do
  [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rm -f "$work"/store.sqlite*
  {
    echo "store: $work/store.sqlite"
    echo "regions:"
    echo "  - {identifier: museum, uuid: 5A4BCFCE-174E-4BAC-A814-092E77F6B7E5}"
    # Past 65,535 (the largest major) the minor counts on.
    for i in $(seq 1 $((n - 1))); do
      if [ "$i" -lt 65536 ]; then echo "  - {identifier: \"$name$i\", uuid: 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0, major: $i}"
      else echo "  - {identifier: \"$name$i\", uuid: 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0, major: $((i % 65536)), minor: $((i / 65536))}"; fi
    done
    echo "sources:"
    echo "  - simulator: {scenario: museum, speed: 8, repeat: true}"
    echo "http: {listen: \"127.0.0.1:$port\", public: true}"
  } > "$work/config.yaml"
  "$bin" run --config "$work/config.yaml" --log-level error > "$work/out.log" 2>&1 & pid=$!
  for _ in $(seq 1 1200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "$bin did not start:" >&2; cat "$work/out.log" >&2; exit 1; }
  sleep "${WARMUP:-3}"
  for query in $queries; do
    [ "$query" = - ] && query=
    # Non-ASCII percent-encoded (curl sends a URL as given).
    url="http://127.0.0.1:$port/v1/regions$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="?&=-_.~"))' "$query")"
    bytes=$(curl -s "$url" | wc -c)
    for _ in $(seq 1 10); do curl -s -o /dev/null -w "%{time_total}\n" "$url"; done \
      | sort -n | awk -v bin="$bin" -v n="$n" -v bytes="$bytes" -v q="${query:-(whole)}" \
          '{a[NR]=$1} END {printf "%s  %d regions  %-24s %9d bytes  best %7.1f ms  median %7.1f ms\n", bin, n, q, bytes, a[1]*1000, a[int((NR+1)/2)]*1000}'
  done
  kill $pid; wait $pid 2>/dev/null || true; pid=
done
