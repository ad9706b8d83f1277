import FuzzSupport

/// The targets of this executable (everything but the daemon's service layer, which is in
/// RegionKitFuzzService so that these build without NIO, Hummingbird, GRDB and Yams).
let targets: [FuzzTarget] = [
    FuzzTarget(name: "h4", run: H4DeframerFuzz.run),
    FuzzTarget(name: "hci-event", run: HCIEventFuzz.run),
    FuzzTarget(name: "advertising-report", run: AdvertisingReportFuzz.run),
    FuzzTarget(name: "btsnoop", run: BTSnoopFuzz.run),
    FuzzTarget(name: "ibeacon", run: IBeaconFuzz.run),
    FuzzTarget(name: "altbeacon", run: AltBeaconFuzz.run),
    FuzzTarget(name: "eddystone", run: EddystoneFuzz.run),
    FuzzTarget(name: "beacon-layout", run: BeaconLayoutFuzz.run),
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
