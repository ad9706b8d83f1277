#!/usr/bin/env bash
# Runs the in-process test suite (the same set as phase 1 of scripts/test.sh: every suite not tagged
# .endToEnd or .realTime) once under address sanitizer and once under thread sanitizer, each in its
# own build folder (.build/asan, .build/tsan), at low priority. See FUZZING.md ("Sanitizers").
#
# Usage: scripts/sanitize.sh [address|thread]... [--filter REGEX]
#   no sanitizer   both, address first
#   --filter REGEX only the matching tests (swift test --filter), e.g. 'RegionKitHCITests'
# Exit status: 0 when every run passed, 1 when a run failed (a sanitizer report fails the run:
# halt_on_error), 77 when the tool chain lacks a sanitizer runtime (reported as skipped).
# Logs: .build/asan/test.log, .build/tsan/test.log.
set -uo pipefail
cd "$(dirname "$0")/.."

sanitizers=() filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    address|thread) sanitizers+=("$1"); shift ;;
    --filter) filter="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(address thread)

export REGIONKIT_FIXTURES="${REGIONKIT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
resource_dir=$(dirname "$(dirname "$(command -v swiftc)")")/lib/swift/clang/lib/linux

# The phase-2 suites (tagged .endToEnd or .realTime) start processes and wait on real-time bounds,
# which the sanitizers' 2-15x slowdown would break; they are left out here, as test.sh's phase 1 does.
phase2_suites() {
  for file in Tests/*Tests/*.swift; do
    module=$(basename "$(dirname "$file")")
    awk -v module="$module" '
      /@Suite\(.*\.tags\([^)]*\.(endToEnd|realTime)/ { pending = 1 }
      pending && match($0, /(struct|class|enum|actor)[ \t]+[A-Za-z_][A-Za-z0-9_]*/) {
        split(substr($0, RSTART, RLENGTH), words, /[ \t]+/)
        print module "." words[2]
        pending = 0
      }' "$file"
  done | sort -u
}
skip=$(phase2_suites | sed 's|$|/|' | paste -sd'|' -)

status=0
for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    address) short=asan; options_var=ASAN_OPTIONS; options="halt_on_error=1:detect_leaks=0:abort_on_error=1" ;;
    thread)  short=tsan; options_var=TSAN_OPTIONS; options="halt_on_error=1:second_deadlock_stack=1" ;;
  esac
  if ! ls "$resource_dir"/libclang_rt.$short-*.a >/dev/null 2>&1; then
    echo "== $sanitizer sanitizer: SKIPPED: no libclang_rt.$short runtime in $resource_dir"
    [ $status = 0 ] && status=77
    continue
  fi
  scratch=".build/$short"
  echo "== $sanitizer sanitizer: building ($scratch)"
  if ! nice -n 10 swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"; then
    echo "== $sanitizer sanitizer: BUILD FAILED"
    status=1
    continue
  fi
  selection=(--skip "$skip")
  [ -n "$filter" ] && selection+=(--filter "$filter")
  echo "== $sanitizer sanitizer: running the in-process tests"
  mkdir -p "$scratch"
  env "$options_var=$options" timeout 3600 nice -n 10 swift test --skip-build --sanitize="$sanitizer" \
    --scratch-path "$scratch" "${selection[@]}" 2>&1 | tee "$scratch/test.log"
  code=${PIPESTATUS[0]}
  reports=$(grep -c -E '^(==[0-9]+==ERROR: AddressSanitizer|WARNING: ThreadSanitizer)' "$scratch/test.log")
  if [ "$code" = 0 ] && [ "$reports" = 0 ]; then
    echo "== $sanitizer sanitizer: passed (log $scratch/test.log)"
  else
    echo "== $sanitizer sanitizer: FAILED (exit $code, $reports sanitizer report(s); log $scratch/test.log)"
    status=1
  fi
done
exit $status
