import FuzzSupport

// REGIONKIT_FUZZ_TARGET=<target> Fuzz/.build/release/RegionKitFuzz [libFuzzer options] CORPUS...
runFuzzer(targets: targets)
