#!/usr/bin/env bash
# Runs the in-process test suite (the same set as phase 1 of scripts/test.sh: every suite not tagged
# .endToEnd or .realTime, chosen by scripts/lib/suites.sh) once under address sanitizer and once
# under thread sanitizer, each in its own build folder (.build/asan, .build/tsan), at low priority.
# See FUZZING.md ("Sanitizers").
#
# Usage: scripts/sanitize.sh [address|thread]... [--filter REGEX] [--build-only]
#   no sanitizer   both, address first
#   --filter REGEX only the matching tests (swift test --filter), e.g. 'RegionKitHCITests'; the
#                  phase-2 suites stay left out
#   --build-only   build the sanitized tests and stop (to build one while the other one runs)
# Exit status: 0 when every run passed, 1 when a build or run failed (a sanitizer report fails the
# run), 77 when the tool chain lacks a sanitizer runtime (reported as skipped).
# Logs: .build/asan/test[-FILTER].log, .build/tsan/test[-FILTER].log.
#
# Reports: address sanitizer stops the test process at its first report (its reports are not
# recoverable); thread sanitizer reports every distinct race and the process then exits 66. Reports
# whose every frame of interest is in a dependency, not RegionKit, are suppressed by one narrow
# entry each in scripts/sanitizers/tsan.supp / asan.supp, each entry with the stack it answers.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/suites.sh

sanitizers=() filter="" build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    address|thread) sanitizers+=("$1"); shift ;;
    --filter) [ $# -ge 2 ] || { echo "sanitize.sh: --filter needs a regex" >&2; exit 2; }
              filter="$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(address thread)

export REGIONKIT_FIXTURES="${REGIONKIT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
resource_dir=$(dirname "$(dirname "$(command -v swiftc)")")/lib/swift/clang/lib/linux

# The phase-2 suites (tagged .endToEnd or .realTime) start processes and wait on real-time bounds,
# which the sanitizers' 2-15x slowdown would break; they are left out here, as test.sh's phase 1 does.
if phase2_untagged_suite_tags; then
  echo "== ERROR: the .endToEnd/.realTime tags above are not on a one-line @Suite attribute; the suites would not be left out"
  exit 1
fi
phase2=()
while IFS= read -r suite; do phase2+=("$suite"); done < <(phase2_suites)
[ ${#phase2[@]} -gt 0 ] || { echo "== ERROR: no suite is tagged .endToEnd or .realTime"; exit 1; }
skip=$(phase2_skip_regex "${phase2[@]}")
log_suffix=""
[ -n "$filter" ] && log_suffix="-$(printf '%s' "$filter" | tr -c 'A-Za-z0-9._-' '_')"

status=0
for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    address) short=asan; options_var=ASAN_OPTIONS
             options="halt_on_error=1:abort_on_error=1:detect_leaks=0:suppressions=$PWD/scripts/sanitizers/asan.supp" ;;
    thread)  short=tsan; options_var=TSAN_OPTIONS
             options="halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:suppressions=$PWD/scripts/sanitizers/tsan.supp" ;;
  esac
  if ! ls "$resource_dir"/libclang_rt.$short-*.a >/dev/null 2>&1; then
    echo "== $sanitizer sanitizer: SKIPPED: no libclang_rt.$short runtime in $resource_dir"
    [ $status = 0 ] && status=77
    continue
  fi
  scratch=".build/$short"
  echo "== $sanitizer sanitizer: building ($scratch)"
  started=$SECONDS
  if ! nice -n 10 swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"; then
    echo "== $sanitizer sanitizer: BUILD FAILED"
    status=1
    continue
  fi
  echo "== $sanitizer sanitizer: built in $(( (SECONDS - started) / 60 )) min"
  [ $build_only = 1 ] && continue
  # A tagged suite that the list does not know would silently run here; stop instead.
  listed=$(swift test list --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" 2>/dev/null) \
    || { echo "== $sanitizer sanitizer: ERROR: swift test list failed"; status=1; continue; }
  if unknown=$(phase2_check_listed "$listed" "${phase2[@]}"); [ -n "$unknown" ]; then
    echo "== ERROR: tagged suite(s) not in 'swift test list':" $unknown
    status=1; continue
  fi
  selection=(--skip "$skip")
  [ -n "$filter" ] && selection+=(--filter "$filter")
  log="$scratch/test$log_suffix.log"
  echo "== $sanitizer sanitizer: running the in-process tests${filter:+ matching $filter} (log $log)"
  started=$SECONDS
  env "$options_var=$options" timeout 3600 nice -n 10 swift test --skip-build --sanitize="$sanitizer" \
    --scratch-path "$scratch" "${selection[@]}" 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  reports=$(grep -c -E '^(==[0-9]+==ERROR: AddressSanitizer|WARNING: ThreadSanitizer)' "$log")
  minutes=$(( (SECONDS - started) / 60 ))
  if [ "$code" = 0 ] && [ "$reports" = 0 ]; then
    echo "== $sanitizer sanitizer: passed in $minutes min (log $log)"
  else
    echo "== $sanitizer sanitizer: FAILED in $minutes min (exit $code, $reports sanitizer report(s); log $log)"
    status=1
  fi
done
exit $status
