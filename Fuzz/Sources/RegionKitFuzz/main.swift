import FuzzSupport

// REGIONKIT_FUZZ_TARGET=<target> Fuzz/.build/release/RegionKitFuzz [libFuzzer options] CORPUS...
runFuzzer(targets: targets)

/// libFuzzer's entry for each input when its own `main` runs (debug builds: see `fuzzOneInput`).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzOneInput(data, size, targets: targets) }
