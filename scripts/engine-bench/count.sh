#!/bin/sh
# Instructions per sighting / per fix of the engine (issue 13), counted by callgrind: stable on a
# noisy shared machine, where timings move ±20 % between runs. valgrind 3.19 cannot run the
# `regionkit` binary (its DWARF 5 reader gives up, and with the debug info stripped it dies on a
# signal inside libdispatch), so this compiles the engine alone with the driver count.swift.txt
# (RegionKitConcurrency + RegionKitCore + RegionKitEngine, `swiftc -O -wmo`, with build.sh).
#
#   scripts/engine-bench/count.sh SRCROOT ingest 10,1000,100000 [SIGHTINGS]   # default 20000
#   scripts/engine-bench/count.sh SRCROOT miss 1000 [SIGHTINGS]
#   scripts/engine-bench/count.sh SRCROOT scanned 10,1000 [SIGHTINGS]           # with scanner names
#   COUNT_PROFILE=corelocation scripts/engine-bench/count.sh SRCROOT scanned 1000   # under the Core Location profile
#   scripts/engine-bench/count.sh SRCROOT geofence REGIONS.csv FIXES.csv      # scripts/bench/generate.py geofence
#
# Each case runs twice under callgrind, the input prepared both times and fed only the second
# time; the difference divided by the sightings (fixes) is printed. Set COUNT_BINARY to reuse a
# driver built before (the build takes minutes).
set -e
here=$(cd "$(dirname "$0")" && pwd); src=$1; mode=$2; shift 2
binary=${COUNT_BINARY:-$(mktemp -d)/count}
if [ ! -x "$binary" ]; then
  "$here/build.sh" "$src" "$binary" "$here/count.swift.txt"
  echo "driver: $binary"
fi
instructions() {  # ARGS... → total instructions (Ir) of one run
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" "$@" >/dev/null 2>&1
  awk '/^summary:|^totals:/ {print $2; exit}' "$out"
  rm -f "$out"
}
case "$mode" in
  ingest|miss|scanned)
    populations=$1; count=${2:-20000}
    for n in $(echo "$populations" | tr ',' ' '); do
      base=$(instructions "$mode" "$n" "$count" 0); fed=$(instructions "$mode" "$n" "$count" 1)
      echo "$mode beacons $n: $(( (fed - base) / count )) instructions per sighting ($count sightings, $fed - $base)"
    done ;;
  geofence)
    fixes=$(( $(wc -l < "$2") - 2 ))
    base=$(instructions geofence "$1" "$2" 0); fed=$(instructions geofence "$1" "$2" 1)
    echo "geofence $(( $(wc -l < "$1") - 1 )) regions: $(( (fed - base) / fixes )) instructions per fix ($fixes fixes, $fed - $base)" ;;
  *) echo "usage: $0 SRCROOT ingest|miss|scanned|geofence ..." >&2; exit 2 ;;
esac
