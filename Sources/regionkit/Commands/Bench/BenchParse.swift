import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth

/// `regionkit bench parse --reports FILE`: decoding throughput of RegionKit's real decoders on a
/// file of HCI LE Advertising Report events, and the full ingest path per second.
///
/// Two timed passes over the events, preloaded into memory, single thread:
/// - **parse**: `HCIEvent(decoding:)` (the LE Advertising Report event) and
///   `IBeaconFrame.decode` of each report's data — what `beacontools.parse_packet` and
///   ibeacon-ble's `iBeaconParser().parse` do, plus the HCI layer they are spared;
/// - **ingest**: the scanner's path into the engine: event decode, `Advertisement`,
///   `AdvertisementSighting` (iBeacon decode), `BeaconObservation`, `MonitoringEngine.ingest`
///   with beacon regions registered (responsive profile). Report `i` is stamped `i / rate` s.
///
/// The regions are built from the fleet in the file (found in an untimed pass that also warms
/// the caches): one per proximity UUID, one per (UUID, major), then single beacons up to
/// `--regions`. Both passes count the iBeacons and sum major + minor, so the figures can be
/// checked against the peers' (`scripts/bench-compare.sh`).
///
/// ```sh
/// swift build -c release --product regionkit
/// .build/release/regionkit bench parse --reports reports.hci --json
/// ```
struct BenchParse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "iBeacon decode and ingest throughput on a file of HCI LE Advertising Report events.",
        discussion: "The file holds HCI event packets (code 0x3E, length, subevent 0x02, reports) back to back, as scripts/bench/generate.py writes them. Run a release build."
    )

    @Option(help: "File of HCI LE Advertising Report events written back to back.")
    var reports: String

    @Option(help: "Beacon regions to register for the ingest pass.")
    var regions: Int = 100

    @Option(help: "Aggregate reports per second used to timestamp the ingest pass.")
    var rate: Double = 10_000

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard regions >= 1 else { throw ValidationError("--regions must be >= 1") }
        guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number of reports per second") }
    }

    func run() async throws {
        try await Console.reportingErrors { try measure() }
    }

    /// What a pass found: reports seen, iBeacons among them, Σ (major + minor), undecodable events.
    struct Tally: Equatable {
        var events = 0
        var reports = 0
        var ibeacons = 0
        var checksum = 0
        var malformed = 0
    }

    func measure() throws {
        let file = try AdvertisingReportFile(path: reports)
        let events = file.events
        let fleet = Self.fleet(events)
        guard !fleet.isEmpty else {
            throw RegionKitError(.malformedInput, "\(reports): no iBeacon among \(events.count) advertising report event(s)")
        }
        let monitored = try Self.regions(for: fleet, count: regions)

        let clock = ContinuousClock()
        var tally = Tally()
        let parseTime = clock.measure { tally = Self.parsePass(events) }

        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        for region in monitored { _ = engine.startMonitoring(region, at: .zero) }
        var produced = (observations: 0, others: 0, events: 0)
        let ingestTime = clock.measure { produced = Self.ingestPass(events, engine: &engine, interval: 1 / rate) }
        let inside = monitored.filter { engine.state(of: $0.identifier) == .inside }.count

        let parseSeconds = parseTime.inSeconds, ingestSeconds = ingestTime.inSeconds
        if output.json {
            var line = JSONLine()
            line.add("events", tally.events)
            line.add("reports", tally.reports)
            line.add("ibeacons", tally.ibeacons)
            line.add("checksum", tally.checksum)
            line.add("malformed", tally.malformed)
            line.add("distinct_beacons", fleet.count)
            line.add("regions", monitored.count)
            line.add("parse_seconds", parseSeconds)
            line.add("parses_per_second", Double(tally.reports) / parseSeconds, decimals: 0)
            line.add("ingest_seconds", ingestSeconds)
            line.add("ingest_per_second", Double(tally.reports) / ingestSeconds, decimals: 0)
            line.add("observations", produced.observations)
            line.add("other_observations", produced.others)
            line.add("delegate_events", produced.events)
            line.add("regions_inside", inside)
            Console.line(line.text)
            return
        }
        Console.line("bench parse: \(tally.reports) reports in \(tally.events) events from \(reports) (\(tally.ibeacons) iBeacon, \(fleet.count) distinct beacons, \(tally.malformed) undecodable events)")
        Console.line(String(format: "  parse  (HCI event + iBeacon decode)             %12.0f reports/s  %8.1f ns/report   checksum %d",
                            Double(tally.reports) / parseSeconds, parseSeconds / Double(tally.reports) * 1e9, tally.checksum))
        Console.line(String(format: "  ingest (decode + observation + engine, %4d regions) %8.0f reports/s  %8.1f ns/report   %d iBeacon and %d other observations, %d delegate events, %d regions inside",
                            monitored.count, Double(tally.reports) / ingestSeconds, ingestSeconds / Double(tally.reports) * 1e9,
                            produced.observations, produced.others, produced.events, inside))
    }

    /// Event decode and iBeacon decode of every report, through the scanner's own
    /// ``BeaconReportPipeline`` (with a zero de-duplication window: every report is decoded,
    /// as the peers do).
    @inline(never)
    static func parsePass(_ events: [[UInt8]]) -> Tally {
        var tally = Tally()
        var pipeline = BeaconReportPipeline(scannerID: nil, deduplicator: ScanResponseDeduplicator(window: 0))
        for (index, event) in events.enumerated() {
            event.withUnsafeBytes { bytes in
                pipeline.process(event: bytes, at: Timestamp(seconds: Double(index))) { observation in
                    tally.checksum &+= Int(observation.identity.major) + Int(observation.identity.minor)
                }
            }
        }
        tally.events = events.count
        tally.reports = pipeline.statistics.reports
        tally.ibeacons = pipeline.statistics.iBeaconFrames
        tally.malformed = pipeline.statistics.malformedEvents
        return tally
    }

    /// The scanner's path from an event to the engine (``BeaconReportPipeline``, then
    /// `MonitoringEngine.ingest`), for every report. Counts iBeacon observations (what the
    /// peers, iBeacon parsers, are compared on) apart from the other formats the scanner also
    /// decodes and ingests (the input's Eddystone-UID adverts, since issue 16).
    @inline(never)
    static func ingestPass(_ events: [[UInt8]], engine: inout MonitoringEngine, interval: Double) -> (observations: Int, others: Int, events: Int) {
        var produced = 0, ibeacons = 0
        var pipeline = BeaconReportPipeline(scannerID: nil)
        for (index, event) in events.enumerated() {
            let time = Timestamp(seconds: Double(index) * interval)
            event.withUnsafeBytes { bytes in
                pipeline.process(event: bytes, at: time) { observation in
                    if observation.identity.format == .iBeacon { ibeacons += 1 }
                    produced += engine.ingest(observation).count
                }
            }
        }
        return (ibeacons, pipeline.statistics.observations - ibeacons, produced)
    }

    /// The distinct iBeacon identities in the file, sorted (an untimed pass that warms the caches).
    static func fleet(_ events: [[UInt8]]) -> [BeaconIdentity] {
        var seen = Set<BeaconIdentity>()
        for event in events {
            guard case .leMeta(.advertisingReport(let reports))? = try? HCIEvent(decoding: event) else { continue }
            for report in reports {
                if let frame = try? IBeaconFrame.decode(report.data) { seen.insert(frame.identity) }
            }
        }
        return seen.sorted()
    }

    /// `count` beacon regions over the fleet: every proximity UUID, then every (UUID, major), then
    /// single beacons, in that order, as far as `count` goes.
    static func regions(for fleet: [BeaconIdentity], count: Int) throws -> [Region] {
        var regions: [Region] = []
        var uuids: [UUID] = []
        var majors: [(UUID, UInt16)] = []
        for identity in fleet {
            if !uuids.contains(identity.uuid) { uuids.append(identity.uuid) }
            if !majors.contains(where: { $0 == (identity.uuid, identity.major) }) { majors.append((identity.uuid, identity.major)) }
        }
        for uuid in uuids where regions.count < count {
            regions.append(.beacon(try BeaconRegion(identifier: "uuid-\(regions.count)", uuid: uuid)))
        }
        for (uuid, major) in majors where regions.count < count {
            regions.append(.beacon(try BeaconRegion(identifier: "major-\(regions.count)", uuid: uuid, major: major)))
        }
        for identity in fleet where regions.count < count {
            regions.append(.beacon(try BeaconRegion(identifier: "beacon-\(regions.count)", uuid: identity.uuid, major: identity.major, minor: identity.minor)))
        }
        return regions
    }
}
