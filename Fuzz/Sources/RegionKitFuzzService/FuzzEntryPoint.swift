import FuzzSupport

/// The daemon's service-layer targets: the run configuration (Yams), MQTT packets (NIO) and the
/// HTTP API's request bodies (Hummingbird module).
let targets: [FuzzTarget] = [
    FuzzTarget(name: "config", run: ConfigurationFuzz.run),
    FuzzTarget(name: "mqtt-packet", run: MQTTPacketFuzz.run),
    FuzzTarget(name: "http-region-body", run: HTTPRegionBodyFuzz.run),
]
let selected = FuzzTarget.select(from: targets)

/// libFuzzer's entry point; the target comes from `REGIONKIT_FUZZ_TARGET` (scripts/fuzz.sh sets it).
///
/// ```sh
/// REGIONKIT_FUZZ_TARGET=config Fuzz/.build/release/RegionKitFuzzService Fuzz/Corpus/config
/// ```
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Called by libFuzzer once before the first input: resolves the target (failing fast when unknown).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    _ = selected.name
    return 0
}
