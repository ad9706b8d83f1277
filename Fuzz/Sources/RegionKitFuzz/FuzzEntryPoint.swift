import FuzzSupport

/// The targets of this executable (everything but the daemon's service layer, which is in
/// RegionKitFuzzService so that these build without NIO, Hummingbird, GRDB and Yams).
let targets: [FuzzTarget] = [
    FuzzTarget(name: "h4", run: H4DeframerFuzz.run),
    FuzzTarget(name: "hci-event", run: HCIEventFuzz.run),
    FuzzTarget(name: "advertising-report", run: AdvertisingReportFuzz.run),
    FuzzTarget(name: "btsnoop", run: BTSnoopFuzz.run),
    FuzzTarget(name: "ibeacon", run: IBeaconFuzz.run),
    FuzzTarget(name: "nmea", run: NMEAFuzz.run),
    FuzzTarget(name: "gpsd", run: GPSDFuzz.run),
    FuzzTarget(name: "gpx", run: GPXFuzz.run),
    FuzzTarget(name: "geojson", run: GeoJSONFuzz.run),
    FuzzTarget(name: "gateway-json", run: GatewayJSONFuzz.run),
    FuzzTarget(name: "gateway-gzip", run: GatewayGzipFuzz.run),
    FuzzTarget(name: "scenario", run: ScenarioFuzz.run),
    FuzzTarget(name: "distance-model", run: DistanceModelFuzz.run),
    FuzzTarget(name: "distance-samples", run: DistanceSamplesFuzz.run),
    FuzzTarget(name: "region-specifier", run: RegionSpecifierFuzz.run),
    FuzzTarget(name: "sighting-message", run: SightingMessageFuzz.run),
    FuzzTarget(name: "engine", run: EngineFuzz.run),
]
let selected = FuzzTarget.select(from: targets)

/// libFuzzer's entry point; the target comes from `REGIONKIT_FUZZ_TARGET` (scripts/fuzz.sh sets it).
///
/// ```sh
/// REGIONKIT_FUZZ_TARGET=nmea Fuzz/.build/release/RegionKitFuzz Fuzz/Corpus/nmea
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
