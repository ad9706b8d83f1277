import FuzzSupport

// REGIONKIT_FUZZ_TARGET=<target> Fuzz/.build/release/RegionKitFuzzService [libFuzzer options] CORPUS...
_ = selected.name   // an unknown target stops here, with the list
runFuzzer(fuzzCallback)
