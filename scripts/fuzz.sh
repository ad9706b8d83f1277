#!/usr/bin/env bash
# Runs RegionKit's libFuzzer targets (Fuzz/, one executable: the target is picked by
# REGIONKIT_FUZZ_TARGET). See FUZZING.md.
#
# Usage: scripts/fuzz.sh [TARGET...] [--runs N | --seconds S] [--ci] [--merge] [--no-build | --build-only] [--list]
#   no TARGET      every target, one after another
#   --runs N       stop each target after N executions (libFuzzer -runs)
#   --seconds S    stop each target after S seconds (libFuzzer -max_total_time); default 60
#   --ci           CI mode: every committed corpus input of each target once, no mutation (nothing
#                  is written back), from a debug build; exit 1 on any crash, timeout or leak; exit 77 with the reason
#                  when the tool chain cannot build fuzzers (so the caller reports "skipped")
#   --merge        after running, fold new coverage into the committed corpus (Fuzz/Corpus/TARGET;
#                  libFuzzer -merge=1 keeps only inputs that add coverage)
#   --no-build     run the executables already built (a long campaign while the tree changes:
#                  only valid while the fuzzed code itself has not changed since that build)
#   --build-only   build the executables and stop (scripts/test.sh builds phase 3's beside phase 2,
#                  then replays with --no-build); exit 77 as above when fuzzers cannot be built
#   --list         print the target names
#   --core         only the targets of RegionKitFuzz (parsers and the engine), not the three of
#                  RegionKitFuzzService, whose sanitized build compiles NIO, BoringSSL, GRDB and
#                  Yams (CI's phase 3 uses it to stay within its time budget)
#
# Inputs found while fuzzing go to Fuzz/.work/corpus/TARGET, crashes (crash-*, timeout-*, oom-*,
# leak-*) to Fuzz/.work/crashes/TARGET, logs and a per-run summary line (target, executions, cov,
# ft, corpus, seconds, status) to Fuzz/.work/results.tsv — all git-ignored (Fuzz/.work/).
# Reproduce a crash: REGIONKIT_FUZZ_TARGET=TARGET Fuzz/.build/release/RegionKitFuzz FILE
# (RegionKitFuzzService for config, mqtt-packet and http-region-body).
# Runs under `nice -n 10`. Build: release (debug with --ci), -sanitize=fuzzer,address, -enable-testing (the engine
# target compares against the engine's brute-force mode, an internal switch).
set -uo pipefail
cd "$(dirname "$0")/.."

runs="" seconds="" ci=0 merge=0 list=0 core=0 build=1 build_only=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    --merge) merge=1; shift ;;
    --list) list=1; shift ;;
    --core) core=1; shift ;;
    --no-build) build=0; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ -n "$runs" ] && [ -n "$seconds" ] && { echo "fuzz.sh: give --runs or --seconds, not both" >&2; exit 2; }
[ $build = 0 ] && [ $build_only = 1 ] && { echo "fuzz.sh: give --no-build or --build-only, not both" >&2; exit 2; }

all_targets=(h4 hci-event advertising-report btsnoop ibeacon altbeacon eddystone beacon-layout nmea gpsd gpx geojson gateway-json gateway-gzip
             scenario config distance-model distance-samples region-specifier mqtt-packet sighting-message
             http-region-body engine)
if [ $core = 1 ]; then
  kept=(); for target in "${all_targets[@]}"; do case " config mqtt-packet http-region-body " in *" $target "*) ;; *) kept+=("$target") ;; esac; done
  all_targets=("${kept[@]}")
fi
if [ $list = 1 ]; then printf '%s\n' "${all_targets[@]}"; exit 0; fi
# Whether $1 is one of the other arguments. (Not `printf … | grep -q`: grep exits at its first
# match, printf can then die of SIGPIPE, and under pipefail the pipeline fails — a CI run reported
# the known target 'nmea' as unknown that way.)
contains() { local wanted=$1 item; shift; for item in "$@"; do [ "$item" = "$wanted" ] && return 0; done; return 1; }
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  contains "$target" "${all_targets[@]}" || { echo "fuzz.sh: unknown target '$target' (--list)" >&2; exit 2; }
  [ -d "Fuzz/Corpus/$target" ] || { echo "fuzz.sh: no corpus at Fuzz/Corpus/$target" >&2; exit 2; }
done

skip() { echo "fuzz.sh: SKIPPED: $1"; exit 77; }
# libFuzzer ships with the Swift tool chain on Linux; without it -sanitize=fuzzer cannot link.
resource_dir=$(dirname "$(dirname "$(command -v swiftc 2>/dev/null || echo /nonexistent/bin/swiftc)")")/lib/swift/clang/lib/linux
command -v swiftc >/dev/null 2>&1 || skip "swiftc is not on PATH"
ls "$resource_dir"/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || skip "this tool chain has no libFuzzer runtime (libclang_rt.fuzzer) in $resource_dir"
ls "$resource_dir"/libclang_rt.asan-*.a >/dev/null 2>&1 || skip "this tool chain has no address sanitizer runtime in $resource_dir"

# The service-layer targets live in their own executable (it links NIO, Hummingbird, GRDB, Yams).
service_targets=" config mqtt-packet http-region-body "
binary_for() { case "$service_targets" in *" $1 "*) echo RegionKitFuzzService ;; *) echo RegionKitFuzz ;; esac; }
products=()
for target in "${targets[@]}"; do
  product=$(binary_for "$target")
  contains "$product" ${products[@]+"${products[@]}"} || products+=("$product")
done
# CI replays each corpus once: a debug build (a quarter of the release build's time; the same traps,
# with the sanitizers) is enough there. Fuzzing itself wants the release build's speed.
# (A debug build would also write an index, which nobody reads here.)
configuration=release index_flag=""
[ $ci = 1 ] && configuration=debug index_flag=--disable-index-store
for product in "${products[@]}"; do
  if [ $build = 0 ]; then
    [ -x "Fuzz/.build/$configuration/$product" ] || { echo "fuzz.sh: --no-build, but Fuzz/.build/$configuration/$product was never built"; exit 1; }
    echo "== $product: the build of $(date -r "Fuzz/.build/$configuration/$product" -u +%FT%TZ) (--no-build)"
    continue
  fi
  echo "== building $product (Fuzz/, $configuration, -sanitize=fuzzer,address)"
  nice -n 10 swift build --package-path Fuzz -c $configuration $index_flag -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
    --product "$product" || { echo "fuzz.sh: the fuzz build of $product failed"; exit 1; }
  [ -x "Fuzz/.build/$configuration/$product" ] || { echo "fuzz.sh: Fuzz/.build/$configuration/$product was not built"; exit 1; }
done
[ $build_only = 1 ] && { echo "== built: ${products[*]} (--build-only)"; exit 0; }

mkdir -p Fuzz/.work
results=Fuzz/.work/results.tsv
[ -f $results ] || printf 'date\ttarget\texecutions\tcov\tft\tcorpus\tseconds\tstatus\n' > $results
# Inputs are capped per target: text formats get more room than binary frames.
max_len() {
  case "$1" in
    gpx|config|scenario|geojson|nmea|gpsd|distance-samples|gateway-json|gateway-gzip|btsnoop) echo 16384 ;;
    engine|mqtt-packet|sighting-message|http-region-body|h4) echo 4096 ;;
    *) echo 1024 ;;
  esac
}

# libFuzzer's -detect_leaks=0 stops leak checks while fuzzing; the address sanitizer's own check at
# exit needs this too: FoundationXML's XMLParser leaks per parse (not RegionKit's code), and the
# at-exit report failed the gpx target on an empty input.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
failed=()
for target in "${targets[@]}"; do
  binary="Fuzz/.build/$configuration/$(binary_for "$target")"
  crashes="Fuzz/.work/crashes/$target"; work="Fuzz/.work/corpus/$target"; log="Fuzz/.work/$target.log"
  mkdir -p "$crashes" "$work"
  options=(-artifact_prefix="$crashes/" -max_len="$(max_len "$target")" -rss_limit_mb=2048 -print_final_stats=1
           -detect_leaks=0)  # FoundationXML's XMLParser leaks 72 bytes per parse (not RegionKit's code)
  if [ $ci = 1 ]; then
    # Deterministic: every committed input once (-runs=0: no mutation), nothing written back. New
    # inputs come from fuzzing runs, not from CI, where a random find would fail an unrelated change.
    options+=(-runs=0 -timeout=30)
    dirs=("$work.ci"); rm -rf "$work.ci"; mkdir -p "$work.ci"; dirs+=("Fuzz/Corpus/$target")
  else
    options+=(-timeout=10)
    if [ -n "$runs" ]; then options+=(-runs="$runs"); else options+=(-max_total_time="${seconds:-60}"); fi
    dirs=("$work" "Fuzz/Corpus/$target")
  fi
  echo "== fuzz $target (${options[*]})"
  start=$(date +%s)
  REGIONKIT_FUZZ_TARGET="$target" nice -n 10 "$binary" "${options[@]}" "${dirs[@]}" >"$log" 2>&1
  code=$?
  elapsed=$(( $(date +%s) - start ))
  [ $ci = 1 ] && rm -rf "$work.ci"
  executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | awk '{print $2}')
  corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' <<<"$last" | awk '{print $2}')
  if [ $code = 0 ]; then status=ok; else status="FAILED($code)"; failed+=("$target"); fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "${executions:-?}" "${cov:-?}" "${ft:-?}" "${corpus:-?}" "$elapsed" "$status" >> $results
  echo "   $target: ${executions:-?} executions in ${elapsed}s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corpus:-?}: $status"
  if [ $code != 0 ]; then
    grep -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|Fatal error|invariant violated|SUMMARY|Test unit written' "$log" | head -8 | sed 's/^/   /'
    ls -t "$crashes" | head -3 | sed "s|^|   artifact: $crashes/|"
  fi
  if [ $merge = 1 ] && [ $ci = 0 ]; then
    REGIONKIT_FUZZ_TARGET="$target" nice -n 10 "$binary" -merge=1 -max_len="$(max_len "$target")" -timeout=10 \
      "Fuzz/Corpus/$target" "$work" >"$log.merge" 2>&1 || echo "   merge into Fuzz/Corpus/$target failed (see $log.merge)"
    echo "   committed corpus: $(ls "Fuzz/Corpus/$target" | wc -l) files, $(du -sh "Fuzz/Corpus/$target" | cut -f1)"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "== fuzzing FAILED for: ${failed[*]} (logs in Fuzz/.work/, inputs in Fuzz/.work/crashes/)"
  exit 1
fi
echo "== fuzzing passed: ${targets[*]}"
