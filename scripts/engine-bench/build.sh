#!/bin/sh
# Engine-only ingest benchmark (issue 13): compiles RegionKitCore + RegionKitEngine of a source
# tree with the driver (main.swift.txt, kept out of SwiftPM's way) as one `swiftc -O -wmo` module,
# minutes instead of a full release build. Usage: scripts/engine-bench/build.sh SRCROOT OUT [DRIVER]
# (DRIVER: another driver file, as count.sh uses count.swift.txt)
# then: nice -n 10 OUT ingest 10,1000,100000 100000   |   OUT miss ...   |   OUT memory 100000
set -e
here=$(cd "$(dirname "$0")" && pwd); src=$1; out=$2; driver=${3:-$here/main.swift.txt}; tmp=$(mktemp -d)
for f in "$src"/Sources/RegionKitConcurrency/*.swift "$src"/Sources/RegionKitCore/*.swift "$src"/Sources/RegionKitEngine/*.swift; do
  [ -f "$f" ] || continue
  sed -e '/^import RegionKitCore/d' -e '/^@_exported import RegionKitCore/d' -e '/^import RegionKitConcurrency/d' \
      -e '/^@_exported import RegionKitConcurrency/d' "$f" > "$tmp/$(basename "$(dirname "$f")")_$(basename "$f")"
done
cp "$driver" "$tmp/main.swift"
nice -n 10 swiftc -O -wmo -module-name EngineBench -package-name RegionKit "$tmp"/*.swift -o "$out"
rm -rf "$tmp"
