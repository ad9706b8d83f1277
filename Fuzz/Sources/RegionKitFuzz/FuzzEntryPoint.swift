import Foundation

/// libFuzzer's entry point. The target is chosen once, from `REGIONKIT_FUZZ_TARGET`
/// (scripts/fuzz.sh sets it); an unknown or missing name stops the run with the list of targets.
///
/// ```sh
/// REGIONKIT_FUZZ_TARGET=nmea Fuzz/.build/release/RegionKitFuzz Fuzz/Corpus/nmea
/// ```
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Called by libFuzzer once before the first input: resolves the target (failing fast when unknown).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    _ = FuzzTarget.selected
    return 0
}
