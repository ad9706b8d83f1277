import FuzzSupport

// REGIONKIT_FUZZ_TARGET=<target> Fuzz/.build/release/RegionKitFuzzService [libFuzzer options] CORPUS...
runFuzzer(targets: targets)
