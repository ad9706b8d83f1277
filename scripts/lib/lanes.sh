# Sourced by scripts/test.sh (not run): runs test suites of the built test bundle, several at a
# time, each in a process of its own.
#
# The bundle is run directly (`RegionKitPackageTests.xctest --testing-library swift-testing
# --filter Suite/`), not through `swift test`: SwiftPM locks the build folder for the whole of a
# `swift test`, so two of them never overlap. (Swift Testing only: test.sh refuses XCTest tests.)
#
# Each suite's output goes to a file of its own and is printed whole when the suite ends (one
# suite's lines never interleave with another's), followed by a line with its wall-clock and CPU
# seconds (its child processes included: the daemons, brokers and servers it started and waited
# for). At the end the seconds are printed in the format of scripts/lib/phase2-seconds.txt, which
# is copied by hand from a CI run's log: it only sets the order of later runs.
#
# Functions:
#   lanes_order SUITE...        prints the suites longest first, by scripts/lib/phase2-seconds.txt
#                               (a suite not in it counts as 60 s: new suites start early)
#   lanes_run LANES SUITE...    runs the suites in LANES parallel lanes, each lane taking the next
#                               suite of the list when its last one ends — but never two of
#                               LANES_HEAVY's at once; status 1 if any failed or did not run to
#                               its end (their names are printed at the end), else 0
#   lanes_stop                  (for an EXIT trap) stops the lanes of a lanes_run under way and the
#                               bundles they run, and removes its files
#
#   lanes_issue_lines FILE      prints the lines of a test run's output that say what failed
#                               (Swift Testing's ✘ lines with an #expect's ↳ message lines,
#                               fatal errors, a crash's banner; never a passing line; at most 40)
#
# Environment: LANES_BUNDLE (the test bundle, required), LANES_TIMEOUT (seconds per suite, 900),
# LANES_HEAVY (space-separated suites that must not run beside one another: the `.heavy` tag),
# LANES_SUMMARY (optional: a file to which each failed suite's name, status and issue lines are
# appended, for a summary at the end of a long log).

LANES_SECONDS_FILE="${LANES_SECONDS_FILE:-scripts/lib/phase2-seconds.txt}"
# The files of the lanes_run under way (for lanes_stop), and its lanes' PIDs.
LANES_WORK=""
LANES_PIDS=()

lanes_order() {
  local suite
  for suite in "$@"; do
    awk -v s="$suite" '$2 == s && !found { print $1 " " s; found = 1 } END { if (!found) print 60 " " s }' "$LANES_SECONDS_FILE" 2>/dev/null \
      || echo "60 $suite"
  done | sort -rn -k1,1 | awk '{ print $2 }'
}

# One suite: its output to a file, then printed whole under the print lock. The bundle runs under
# `timeout` (its own process group: a signal to `timeout` reaches the bundle and what it started);
# its PID is in $work/pid.<lane> while it runs, for lanes_stop.
_lanes_one() {
  local suite="$1" work="$2" lane="$3" out rc start
  out=$(mktemp "$work/out.XXXXXX")
  start=$(date +%s.%N)
  # `time` of bash: the CPU of the bundle and of every child it waited for.
  { TIMEFORMAT='%U %S'; time {
      timeout -k 60 "${LANES_TIMEOUT:-900}" env NO_COLOR=1 "$LANES_BUNDLE" --testing-library swift-testing --filter "$suite/" >"$out" 2>&1 &
      echo $! >"$work/pid.$lane"
      wait $!
    }; } 2>"$out.cpu"
  rc=$?
  rm -f "$work/pid.$lane"
  local cpu wall
  cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$out.cpu" 2>/dev/null)
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  {
    flock 9
    echo "== phase 2: $suite"
    cat "$out"
    echo "== phase 2: $suite: status $rc after ${wall} s (${cpu:-?} s of CPU)"
    if [ $rc != 0 ]; then
      echo "$suite" >>"$work/failed"
      [ -n "${LANES_SUMMARY:-}" ] && {
        echo "-- phase 2: $suite: status $rc after ${wall} s$( [ $rc = 124 ] && echo " (timed out: LANES_TIMEOUT=${LANES_TIMEOUT:-900} s)")"
        lanes_issue_lines "$out" | sed 's/^/   /'
      } >>"$LANES_SUMMARY"
    fi
    echo "$wall $suite" >>"$work/seconds"
    echo "$suite" >>"$work/ended"
  } 9>>"$work/print.lock"
  rm -f "$out" "$out.cpu"
}

# Whether $1 is one of LANES_HEAVY's suites.
_lanes_heavy() {
  [[ " ${LANES_HEAVY:-} " == *" $1 "* ]]
}

# The index of the next suite for lane $2: the first one no lane has taken, but not a heavy one
# while another lane runs one (then a later light one, or, when only heavy ones are left, a wait
# for the running one to end). Prints nothing when every suite is taken. The lanes share the
# state under a lock: $work/taken (one index a line) and $work/heavy (the PID of the lane running
# a heavy suite, empty when none does; a lane that died is taken as done with it).
_lanes_next() {
  local work="$1" lane="$2" count="$3" index chosen holder
  shift 3
  local suites=("$@")
  while :; do
    chosen=""
    {
      flock 8
      holder=$(cat "$work/heavy")
      if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then holder=""; : >"$work/heavy"; fi
      for ((index = 0; index < count; index++)); do
        grep -qx "$index" "$work/taken" && continue
        if _lanes_heavy "${suites[$index]}"; then
          [ -n "$holder" ] && { chosen=wait; continue; }
          echo "$lane" >"$work/heavy"
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

# Lane $2 ended its heavy suite: another may start.
_lanes_heavy_done() {
  local work="$1" lane="$2"
  {
    flock 8
    [ "$(cat "$work/heavy")" = "$lane" ] && : >"$work/heavy"
  } 8>>"$work/next.lock"
}

lanes_run() {
  local lanes="$1" lane index status=0 suite
  shift
  local suites=("$@")
  [ -n "${LANES_BUNDLE:-}" ] && [ -x "$LANES_BUNDLE" ] || { echo "== ERROR: no test bundle at '${LANES_BUNDLE:-}'"; return 1; }
  [[ "$lanes" =~ ^[1-9][0-9]*$ ]] || { echo "== ERROR: '$lanes' lanes: a whole number from 1 up"; return 1; }
  LANES_WORK=$(mktemp -d)
  local work="$LANES_WORK"
  : >"$work/heavy"
  : >"$work/taken"
  : >"$work/failed"
  : >"$work/ended"
  LANES_PIDS=()
  for ((lane = 0; lane < lanes; lane++)); do
    (
      me=$BASHPID
      while index=$(_lanes_next "$work" "$me" ${#suites[@]} "${suites[@]}"); [ -n "$index" ]; do
        _lanes_one "${suites[$index]}" "$work" "$me"
        if _lanes_heavy "${suites[$index]}"; then _lanes_heavy_done "$work" "$me"; fi
      done
    ) &
    LANES_PIDS+=($!)
  done
  wait "${LANES_PIDS[@]}"   # the lanes only: the caller may have other jobs running
  LANES_PIDS=()
  echo "== phase 2: seconds per suite (the format of $LANES_SECONDS_FILE):"
  sort -rn "$work/seconds" 2>/dev/null | sed 's/^/   /'
  # A suite taken by a lane that died (killed, out of memory) has no result: a failure.
  for suite in "${suites[@]}"; do
    grep -qxF "$suite" "$work/ended" || {
      echo "== phase 2: $suite did not run to its end"
      echo "$suite" >>"$work/failed"
      [ -n "${LANES_SUMMARY:-}" ] && echo "-- phase 2: $suite did not run to its end (its lane died)" >>"$LANES_SUMMARY"
    }
  done
  if [ -s "$work/failed" ]; then
    echo "== phase 2: FAILED:" $(cat "$work/failed")
    status=1
  fi
  rm -rf "$work"
  LANES_WORK=""
  return $status
}

lanes_issue_lines() {
  # ✘ lines with the ↳ lines under them (an #expect's message), and the first lines of a crash
  # (Swift's backtracer: "*** Program crashed: …", "Thread 0 crashed:"); never a passing test's line.
  awk '
    /^(◇|✔)/ { after = 0; next }
    /✘/ { print; after = ($0 ~ /recorded an issue/) ? 3 : 0; next }
    after > 0 && /^[[:space:]]*↳/ { print; after--; next }
    { after = 0 }
    /Fatal error|fatal error|Program crashed|[Tt]hread [0-9]+ crashed|Segmentation fault|Illegal instruction|terminated by signal/ { print }
  ' "$1" 2>/dev/null | cut -c1-400 | head -40
}

lanes_stop() {
  [ ${#LANES_PIDS[@]} -gt 0 ] && kill "${LANES_PIDS[@]}" 2>/dev/null
  if [ -n "$LANES_WORK" ] && [ -d "$LANES_WORK" ]; then
    local pid
    for pid in $(cat "$LANES_WORK"/pid.* 2>/dev/null); do kill "$pid" 2>/dev/null; done
    rm -rf "$LANES_WORK"
  fi
  LANES_PIDS=()
  LANES_WORK=""
}
