import Foundation

/// One fuzz target: a name (the corpus folder under Fuzz/Corpus and the argument of scripts/fuzz.sh)
/// and the function libFuzzer calls with each input. A target must never trap on any input; a
/// violated invariant is reported with ``FuzzTarget/fail(_:)`` (which aborts, so libFuzzer keeps the input).
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void

    static let all: [FuzzTarget] = [
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
        FuzzTarget(name: "config", run: ConfigurationFuzz.run),
        FuzzTarget(name: "distance-model", run: DistanceModelFuzz.run),
        FuzzTarget(name: "distance-samples", run: DistanceSamplesFuzz.run),
        FuzzTarget(name: "region-specifier", run: RegionSpecifierFuzz.run),
        FuzzTarget(name: "mqtt-packet", run: MQTTPacketFuzz.run),
        FuzzTarget(name: "sighting-message", run: SightingMessageFuzz.run),
        FuzzTarget(name: "http-region-body", run: HTTPRegionBodyFuzz.run),
        FuzzTarget(name: "engine", run: EngineFuzz.run),
    ]

    /// The target named by `REGIONKIT_FUZZ_TARGET`.
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["REGIONKIT_FUZZ_TARGET"] ?? ""
        guard let target = all.first(where: { $0.name == name }) else {
            let names = all.map(\.name).joined(separator: " ")
            FileHandle.standardError.write(Data("RegionKitFuzz: set REGIONKIT_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()

    /// Reports a broken invariant and aborts (libFuzzer writes the input as a crash file).
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("RegionKitFuzz invariant violated: \(message)\n".utf8))
        abort()
    }
}
