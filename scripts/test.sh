#!/usr/bin/env bash
# Runs every RegionKit test, installing what the tests need first. CI (.ci/run) calls exactly this.
#   - Debian packages: zlib and SQLite headers (build), tshark and bluez's btmon (btsnoop checks), gpsd + gpsd-clients (gpsfake),
#     mosquitto + mosquitto-clients (a private MQTT broker, mosquitto_pub/sub) and openssl (its TLS certificates),
#     chromium + chromium-driver (the dashboard in a real headless browser),
#     nats-server (a private 3-node NATS cluster with JetStream and its MQTT listener) and postgresql
#     (a private PostgreSQL cluster for the shared store's conformance suite)
#   - a Python venv with Bumble (virtual Bluetooth controllers for the HCI end-to-end tests) and
#     schemathesis (the HTTP API against its OpenAPI document), made beside the Swift build
# Tests whose tool could not be installed are reported as skipped, with the reason.
# Phase 1 runs the in-process tests in parallel. Phase 2 runs the suites tagged .endToEnd (they
# start processes: Bumble, gpsd, the daemon, the CLI, brokers, servers) or .realTime (bounded
# real-time waits), each in a process of its own: first those also tagged .alone, one at a time
# with nothing beside them (2a); then the others three at a time (2b), with phase 1 and phase 3's
# build beside them at the lowest CPU priority. Phase 3 runs each libFuzzer target briefly on its
# committed corpus (scripts/fuzz.sh --ci). Times since the start are printed after each step: the
# budget is "well under 30 minutes" for the whole of CI.
# Usage: ./scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
command -v btmon >/dev/null 2>&1 || missing+=(bluez)
command -v gpsfake >/dev/null 2>&1 || missing+=(gpsd gpsd-clients)
# mosquitto installs to /usr/sbin, which is not on every PATH.
{ command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; } || missing+=(mosquitto)
command -v mosquitto_sub >/dev/null 2>&1 || missing+=(mosquitto-clients)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
{ command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ]; } || missing+=(nats-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
      || echo "== WARNING: apt-get could not install ${missing[*]}; the tests needing them will be skipped"
  else
    echo "== WARNING: not root, cannot apt-get install ${missing[*]}; the tests needing them will be skipped"
  fi
fi

# Whatever this script started in the background is stopped when it ends, however it ends
# (Ctrl-C and SIGTERM included: `timeout` puts what it runs in a process group of its own, which
# a terminal's Ctrl-C does not reach), and its files are removed.
venv_job="" phase1="" fuzz_build="" venv_log="" phase1_log="" fuzz_build_log=""
# What failed, with the lines that say why, printed again at the very end: CI keeps only the tail
# of a long log (the failure of stop 60 was not in it).
summary=$(mktemp)
export LANES_SUMMARY="$summary"
cleanup() {
  declare -F lanes_stop >/dev/null && lanes_stop
  local pid
  for pid in $venv_job $phase1 $fuzz_build; do kill "$pid" 2>/dev/null; done
  rm -f ${venv_log:+"$venv_log" "$venv_log.python"} ${phase1_log:+"$phase1_log"} ${fuzz_build_log:+"$fuzz_build_log"} "$summary"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The Python venv (Bumble, schemathesis) is made beside the Swift build, which leaves the network
# and the disk mostly idle; its output is printed once the build is done.
venv_log=$(mktemp)
(
  echo "== Bumble virtual controllers (Python venv at .venv)"
  if python=$(bash scripts/bumble/setup.sh); then
    echo "$python" > "$venv_log.python"
  else
    echo "== WARNING: Bumble could not be installed; the HCI end-to-end tests will be skipped"
  fi
  echo "== schemathesis (OpenAPI conformance of the HTTP API) in .venv"
  if [ -x .venv/bin/pip ]; then
    .venv/bin/python -c "import schemathesis" 2>/dev/null \
      || .venv/bin/pip install --quiet --disable-pip-version-check "schemathesis==4.32.5" \
      || echo "== WARNING: schemathesis could not be installed; the OpenAPI conformance test will be skipped"
  fi
) > "$venv_log" 2>&1 &
venv_job=$!

# The real recorded data the tests read in place (override with REGIONKIT_FIXTURES).
export REGIONKIT_FIXTURES="${REGIONKIT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
[ -d "$REGIONKIT_FIXTURES" ] || echo "== WARNING: fixtures not found at $REGIONKIT_FIXTURES: tests that need them will be skipped"

echo "== $(swift --version 2>&1 | head -1)"
# REGIONKIT_OPTIMIZED_CORE=1 (.ci/run sets it): Package.swift compiles the pure modules with -O.
# REGIONKIT_BUILD_FLAGS: extra `swift build` flags. Not --disable-index-store: on Linux the test
# build discovers the tests from the index store ("index store path does not exist", CI of stop 27).
swift build --build-tests ${REGIONKIT_BUILD_FLAGS:-} || exit 1
# Where CI's time goes (seconds since this script started; the budget is "well under 30 minutes").
echo "== built after ${SECONDS} s"
wait $venv_job
cat "$venv_log"
if [ -s "$venv_log.python" ]; then
  REGIONKIT_BUMBLE_PYTHON=$(cat "$venv_log.python")
  export REGIONKIT_BUMBLE_PYTHON
fi
rm -f "$venv_log" "$venv_log.python"
venv_job=""
echo "== venv ready after ${SECONDS} s"

# Phase 2 runs every suite tagged `.endToEnd` (it starts processes or real components) or
# `.realTime` (it waits on real-time bounds that CPU-heavy tests beside it could exhaust), each in
# a process of its own; read from the source by scripts/lib/suites.sh (shared with scripts/sanitize.sh, which
# leaves the same suites out). Each name is then checked against `swift test list`: a tagged suite
# the list does not know (renamed, nested, attribute split over lines) stops the run instead of
# silently running in neither phase, and a tag on a single @Test (the script selects whole suites)
# is refused too.
source scripts/lib/suites.sh
# The bundle is run with Swift Testing only (scripts/lib/lanes.sh): an XCTest test would never run.
if xctest=$(grep -rlE '^[[:space:]]*(@testable[[:space:]]+)?import[[:space:]]+XCTest' Tests); then
  echo "== ERROR: XCTest in $xctest; scripts/test.sh runs Swift Testing only: write it with Swift Testing"
  exit 1
fi
E2E_SUITES=()
while IFS= read -r suite; do E2E_SUITES+=("$suite"); done < <(phase2_suites)
if phase2_untagged_suite_tags; then
  echo "== ERROR: the .endToEnd/.realTime tags above are not on a one-line @Suite attribute; scripts/test.sh selects whole suites"
  exit 1
fi
if [ ${#E2E_SUITES[@]} -eq 0 ]; then
  echo "== ERROR: no suite is tagged .endToEnd; the end-to-end tests would run in parallel with everything else"
  exit 1
fi
listed=$(swift test list --skip-build ${REGIONKIT_BUILD_FLAGS:-} 2>/dev/null) || { echo "== ERROR: swift test list failed"; exit 1; }
if unknown=$(phase2_check_listed "$listed" "${E2E_SUITES[@]}"); [ -n "$unknown" ]; then
  echo "== ERROR: tagged suite(s) not in 'swift test list':" $unknown
  exit 1
fi
if limits=$(phase1_minute_limits "${E2E_SUITES[@]}"); then
  echo "== ERROR: a time limit in minutes in a phase-1 test (it runs in parallel at nice 19, where a minute measures the queue, not the test); use .timeLimit(.inProcess):"
  echo "$limits"
  exit 1
fi
echo "== phase-2 suites (tagged .endToEnd or .realTime): ${E2E_SUITES[*]}"
skip=$(phase2_skip_regex "${E2E_SUITES[@]}")
status=0

# The test bundle is run directly from here on (scripts/lib/lanes.sh says why).
source scripts/lib/lanes.sh
LANES_BUNDLE="$(swift build --show-bin-path ${REGIONKIT_BUILD_FLAGS:-})/RegionKitPackageTests.xctest"
export LANES_BUNDLE
ALONE=() OTHERS=()
while IFS= read -r suite; do ALONE+=("$suite"); done < <(phase2_alone_suites)
LANES_HEAVY="$(phase2_heavy_suites | tr '\n' ' ')"
export LANES_HEAVY
for suite in "${ALONE[@]}" $LANES_HEAVY; do
  [[ " ${E2E_SUITES[*]} " == *" $suite "* ]] || { echo "== ERROR: $suite is tagged .alone or .heavy but neither .endToEnd nor .realTime (it would run in phase 1)"; exit 1; }
done
for suite in $(lanes_order "${E2E_SUITES[@]}"); do
  [[ " ${ALONE[*]} " == *" $suite "* ]] || OTHERS+=("$suite")
done
if [ $((${#ALONE[@]} + ${#OTHERS[@]})) -ne ${#E2E_SUITES[@]} ]; then
  echo "== ERROR: ${#ALONE[@]} alone + ${#OTHERS[@]} other suites, but ${#E2E_SUITES[@]} phase-2 suites (a duplicate line in $LANES_SECONDS_FILE?)"
  exit 1
fi

# Phase 2a: each suite tagged `.alone` (bounds of a fraction of a second under a CPU load of its
# own), with nothing beside it.
if [ ${#ALONE[@]} -gt 0 ]; then
  echo "== phase 2a: ${ALONE[*]}, one at a time, nothing beside"
  lanes_run 1 "${ALONE[@]}" || status=1
  echo "== phase 2a done after ${SECONDS} s"
fi

# Then three things at once, CPU shared by priority. Phase 2b, at normal priority: the other
# phase-2 suites, three at a time (three lanes, each taking the next suite, longest first by
# scripts/lib/phase2-seconds.txt, never two tagged `.heavy` at once); most of them wait on real
# time and real components far more than they compute (the CI of session 77: 1,337 s of suites,
# 434 s of CPU, in 700 s on two lanes: 31 minutes in all, over the budget; REGIONKIT_PHASE2_LANES
# sets the count). Beside them at nice 19, which yields a core to a nice-0 process whenever it wants it
# (Linux weighs nice 19 at 15 against nice 0's 1024): phase 1, the in-process tests in parallel
# (≈ 160 s of CPU with REGIONKIT_OPTIMIZED_CORE=1, ≈ 700 s without; their real-time waits are
# seconds or more — bounds tighter than that make a suite `.realTime`). And phase 3's sanitized
# build (≈ 100 s on 2 cores) as SCHED_IDLE, not nice: SwiftPM starts its compilers at nice 0
# whatever its own nice value (they ran beside phase 2 at full priority until session 50), but
# keeps the policy. Phase 1's and the fuzz build's output are printed when they end, after 2b's.
phase1_log=$(mktemp)
nice -n 19 timeout -k 60 1800 env NO_COLOR=1 "$LANES_BUNDLE" --testing-library swift-testing --skip "$skip" > "$phase1_log" 2>&1 &
phase1=$!
fuzz_build_log=$(mktemp)
idle=(nice -n 19)
chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0)
# (Not REGIONKIT_OPTIMIZED_CORE: the fuzz package builds the core modules as its own debug build.)
"${idle[@]}" timeout 1500 env -u REGIONKIT_OPTIMIZED_CORE bash scripts/fuzz.sh --core --ci --build-only > "$fuzz_build_log" 2>&1 &
fuzz_build=$!
echo "== phase 2b: the other phase-2 suites, ${REGIONKIT_PHASE2_LANES:-3} at a time (never two .heavy ones); beside them phase 1 (nice 19) and the fuzz build (${idle[*]})"
lanes_run "${REGIONKIT_PHASE2_LANES:-3}" "${OTHERS[@]}" || status=1
echo "== phase 2b done after ${SECONDS} s"
wait $phase1
phase1_status=$?
phase1=""
echo "== phase 1: in-process tests (parallel, beside phase 2b)"
cat "$phase1_log"
if [ $phase1_status != 0 ]; then
  echo "== phase 1: FAILED (status $phase1_status)"
  status=1
  { echo "-- phase 1: status $phase1_status$( [ $phase1_status = 124 ] && echo " (timed out after 1,800 s)")"
    lanes_issue_lines "$phase1_log" | sed 's/^/   /'; } >>"$summary"
fi
echo "== phase 1 done after ${SECONDS} s"

# Phase 3: the libFuzzer targets of the parsers and the engine (Fuzz/, see FUZZING.md) replay their
# committed corpora (the seeds, coverage-adding inputs and every fixed crash) once, without
# mutation, so a parser regression fails CI and a random new find does not fail an unrelated
# change (three such finds of the first CI run with mutation were fixed and joined the corpora). Bounded: the
# sanitized debug build (started beside phase 2b, above) plus one pass over 20 corpora. The three service targets (config, mqtt-packet, http-region-body) are run
# by `scripts/fuzz.sh` by hand: their sanitized build (NIO, BoringSSL, GRDB, Yams) would add about
# 20 minutes to CI. A tool chain without libFuzzer or the address sanitizer makes scripts/fuzz.sh
# exit 77: reported as skipped, not passed.
echo "== phase 3: fuzz targets on their corpora (scripts/fuzz.sh --core --ci; built beside phase 2b)"
wait $fuzz_build
fuzz_status=$?
fuzz_build=""
cat "$fuzz_build_log"
[ $fuzz_status = 0 ] && { timeout 1500 env -u REGIONKIT_OPTIMIZED_CORE bash scripts/fuzz.sh --core --ci --no-build; fuzz_status=$?; }
case $fuzz_status in
  0) ;;
  77) echo "== phase 3: SKIPPED (the reason is above); the fuzz targets did not run" ;;
  *) echo "== phase 3: FAILED (a fuzz target crashed, timed out or did not build)"; status=1
     echo "-- phase 3: status $fuzz_status (a fuzz target crashed, timed out or did not build)" >>"$summary" ;;
esac
if [ $status != 0 ]; then
  echo "== FAILED (the full output of each is above):"
  if [ -s "$summary" ]; then cat "$summary"; else echo "   (no test failed: a step before the tests, above)"; fi
fi
echo "== all done after ${SECONDS} s"
exit $status
