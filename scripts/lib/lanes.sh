# Sourced by scripts/test.sh (not run): runs test suites of the built test bundle, several at a
# time, each in a process of its own.
#
# The bundle is run directly (`RegionKitPackageTests.xctest --testing-library swift-testing
# --filter Suite/`), not through `swift test`: SwiftPM locks the build folder for the whole of a
# `swift test`, so two of them never overlap.
#
# Each suite's output goes to a file of its own and is printed whole when the suite ends (one
# suite's lines never interleave with another's), followed by a line with its wall-clock and CPU
# seconds (its child processes included: the daemons, brokers and servers it started and waited
# for) — what scripts/lib/phase2-seconds.txt, the order of the next runs, is made from.
#
# Functions:
#   lanes_order SUITE...        prints the suites longest first, by scripts/lib/phase2-seconds.txt
#                               (a suite not in it counts as 60 s: new suites start early)
#   lanes_run LANES SUITE...    runs the suites in LANES parallel lanes, each lane taking the next
#                               suite of the list when its last one ends — but never two of
#                               LANES_HEAVY's at once; status 1 if any failed (their names are
#                               printed at the end), else 0
#
# Environment: LANES_BUNDLE (the test bundle, required), LANES_TIMEOUT (seconds per suite, 900),
# LANES_HEAVY (space-separated suites that must not run beside one another: the `.heavy` tag).

LANES_SECONDS_FILE="${LANES_SECONDS_FILE:-scripts/lib/phase2-seconds.txt}"

lanes_order() {
  local suite
  for suite in "$@"; do
    awk -v s="$suite" '$2 == s { print $1 " " s; found = 1 } END { if (!found) print 60 " " s }' "$LANES_SECONDS_FILE" 2>/dev/null \
      || echo "60 $suite"
  done | sort -rn -k1,1 | awk '{ print $2 }'
}

# One suite: its output to a file, then printed whole under the print lock.
_lanes_one() {
  local suite="$1" work="$2" out rc start
  out=$(mktemp "$work/out.XXXXXX")
  start=$(date +%s.%N)
  # `time` of bash: the CPU of the bundle and of every child it waited for.
  { TIMEFORMAT='%U %S'; time NO_COLOR=1 timeout "${LANES_TIMEOUT:-900}" "$LANES_BUNDLE" --testing-library swift-testing --filter "$suite/" >"$out" 2>&1; } 2>"$out.cpu"
  rc=$?
  local cpu wall
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$out.cpu" 2>/dev/null)
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  {
    flock 9
    echo "== phase 2: $suite"
    cat "$out"
    echo "== phase 2: $suite: status $rc after ${wall} s (${cpu:-?} s of CPU)"
    [ $rc = 0 ] || echo "$suite" >>"$work/failed"
    echo "$wall $suite" >>"$work/seconds"
  } 9>>"$work/print.lock"
  rm -f "$out" "$out.cpu"
}

# Whether $1 is one of LANES_HEAVY's suites.
_lanes_heavy() {
  [[ " ${LANES_HEAVY:-} " == *" $1 "* ]]
}

# The index of the next suite for a lane: the first one no lane has taken, but not a heavy one
# while another heavy one runs (then a later light one, or, when only heavy ones are left, a wait
# for the running one to end). Prints nothing when every suite is taken. The lanes share the
# state under a lock: $work/taken (one index a line) and $work/heavy (how many heavy ones run).
_lanes_next() {
  local work="$1" count="$2" index chosen
  shift 2
  local suites=("$@")
  while :; do
    chosen=""
    {
      flock 8
      local heavy
      heavy=$(cat "$work/heavy")
      for ((index = 0; index < count; index++)); do
        grep -qx "$index" "$work/taken" && continue
        if _lanes_heavy "${suites[$index]}"; then
          [ "$heavy" -gt 0 ] && { chosen=wait; continue; }
          echo $((heavy + 1)) >"$work/heavy"
        fi
        echo "$index" >>"$work/taken"
        chosen=$index
        break
      done
    } 8>>"$work/next.lock"
    case "$chosen" in
      "") return 0 ;;                 # every suite taken
      wait) sleep 1 ;;                # only heavy ones left, one of them running
      *) echo "$chosen"; return 0 ;;
    esac
  done
}

# A heavy suite ended: another may start.
_lanes_heavy_done() {
  local work="$1"
  {
    flock 8
    echo $(($(cat "$work/heavy") - 1)) >"$work/heavy"
  } 8>>"$work/next.lock"
}

lanes_run() {
  local lanes="$1" work lane index status=0
  shift
  local suites=("$@")
  [ -n "${LANES_BUNDLE:-}" ] && [ -x "$LANES_BUNDLE" ] || { echo "== ERROR: no test bundle at '${LANES_BUNDLE:-}'"; return 1; }
  work=$(mktemp -d)
  echo 0 >"$work/heavy"
  : >"$work/taken"
  : >"$work/failed"
  local pids=()
  for ((lane = 0; lane < lanes; lane++)); do
    (
      while index=$(_lanes_next "$work" ${#suites[@]} "${suites[@]}"); [ -n "$index" ]; do
        _lanes_one "${suites[$index]}" "$work"
        if _lanes_heavy "${suites[$index]}"; then _lanes_heavy_done "$work"; fi
      done
    ) &
    pids+=($!)
  done
  wait "${pids[@]}"   # the lanes only: the caller may have other jobs running
  echo "== phase 2: seconds per suite (the format of $LANES_SECONDS_FILE):"
  sort -rn "$work/seconds" 2>/dev/null | sed 's/^/   /'
  if [ -s "$work/failed" ]; then
    echo "== phase 2: FAILED:" $(cat "$work/failed")
    status=1
  fi
  rm -rf "$work"
  return $status
}
