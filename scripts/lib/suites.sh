# Shared by scripts/test.sh and scripts/sanitize.sh (sourced, not run): which test suites run in
# test.sh's phase 2, each in a process of its own, and are left out of the in-process runs
# (test.sh's phase 1, the sanitizer runs); and which of them run alone or never beside each other.
#
# A phase-2 suite is tagged `.endToEnd` (it starts processes or real components) or `.realTime` (it
# waits on real-time bounds that parallel CPU-heavy tests, or a sanitizer's slowdown, could
# exhaust); both tags are in Tests/RegionKitTestSupport/Tags.swift. `swift test` (6.3) cannot select
# tests by tag on the command line, only by regex over names (--filter/--skip), so the tagged suites
# are read from the source: a `@Suite(...)` attribute line containing `.tags(...)` with one of the
# two tags, then the type it annotates (`struct Name`, on that line or a following one), named
# Module.Name with the module being the test target's folder (files in its sub-folders included).
#
# Functions (run from the package root):
#   test_sources                prints the test targets' Swift files (sub-folders included), sorted
#   phase2_suites               prints the phase-2 suites, one Module.Name a line, sorted, unique
#   phase2_alone_suites         prints those of them also tagged `.alone` (run with no other beside)
#   phase2_heavy_suites         prints those of them also tagged `.heavy` (never two at once)
#   phase2_untagged_suite_tags  prints (grep -n) the tags that are not on a one-line @Suite
#                               attribute; status 0 when there is such a line (an error: the scripts
#                               select whole suites), 1 when there is none
#   phase1_minute_limits SUITE...
#                               prints (grep -n) each `.timeLimit(.minutes(N))` in a file that
#                               declares or extends none of the given phase-2 suites (a phase-1
#                               file: its tests take `.timeLimit(.inProcess)`, see
#                               Tests/RegionKitTestSupport/TimeLimitTrait+InProcess.swift);
#                               status 0 when there is one (an error), 1 when there is none
#   phase2_skip_regex SUITE...  prints the `swift test --skip` regex of the given suites, each
#                               anchored with its `/` so that a suite name never matches a longer one
#                               (DaemonTests vs DaemonTestsExtra)
#   phase2_check_listed LISTING SUITE...
#                               prints each given suite that the `swift test list` output LISTING
#                               does not know (renamed, nested, attribute split over lines);
#                               status 1 when there is one, else 0

phase2_suites() {
  _suites_tagged 'endToEnd|realTime'
}

# The phase-2 suites that also carry `.alone` (test.sh runs each with no other suite beside it).
phase2_alone_suites() {
  _suites_tagged 'alone'
}

# The phase-2 suites that also carry `.heavy` (test.sh never runs two of them at once).
phase2_heavy_suites() {
  _suites_tagged 'heavy'
}

# The suites whose one-line @Suite attribute has a tag matching the ERE alternatives $1.
_suites_tagged() {
  local file module tags="$1"
  # Every Swift file of a test target, in sub-folders too (Tests/RegionKitServiceTests/Cluster/…).
  while IFS= read -r file; do
    module=${file#Tests/}
    module=${module%%/*}
    awk -v module="$module" -v tags="$tags" '
      $0 ~ ("@Suite\\(.*\\.tags\\([^)]*\\.(" tags ")([^A-Za-z0-9_]|$)") { pending = 1 }
      pending && match($0, /(struct|class|enum|actor)[ \t]+[A-Za-z_][A-Za-z0-9_]*/) {
        split(substr($0, RSTART, RLENGTH), words, /[ \t]+/)
        print module "." words[2]
        pending = 0
      }' "$file"
  done < <(test_sources) | sort -u
}

# The Swift files of the test targets (Tests/<Name>Tests/, sub-folders included), sorted.
test_sources() {
  find Tests -path 'Tests/*Tests/*' -name '*.swift' | LC_ALL=C sort
}

phase2_untagged_suite_tags() {
  test_sources | xargs grep -nE '\.tags\(.*\.(endToEnd|realTime)' | grep -v '@Suite('
}

phase1_minute_limits() {
  local file module name found=1 phase2
  while IFS= read -r file; do
    module=${file#Tests/}
    module=${module%%/*}
    phase2=0
    # The file's top-level types (declared or extended): one of them a phase-2 suite makes it phase 2.
    for name in $(sed -nE 's/^(public |final |@[A-Za-z]+ )*(struct|class|enum|actor|extension)[[:space:]]+([A-Za-z_][A-Za-z0-9_]*).*/\3/p' "$file"); do
      [[ " $* " == *" $module.$name "* ]] && { phase2=1; break; }
    done
    [ $phase2 = 1 ] && continue
    grep -nH '\.timeLimit(\.minutes(' "$file" && found=0
  done < <(test_sources)
  return $found
}

phase2_skip_regex() {
  local skip
  skip=$(printf '%s/|' "$@")
  printf '%s\n' "${skip%|}"
}

phase2_check_listed() {
  local listing="$1" suite missing=0
  shift
  for suite in "$@"; do
    grep -q "^${suite}/" <<<"$listing" || { echo "$suite"; missing=1; }
  done
  return $missing
}
