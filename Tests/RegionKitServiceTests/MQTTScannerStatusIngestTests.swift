import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitEngine
import RegionKitTestSupport
@testable import RegionKitService

/// The MQTT sources' scanner status (``MQTTSourceConfiguration/statusFilter``): which filter is
/// read, and what the ingest does with its messages.
@Suite("MQTT ingest: the scanners' status")
struct MQTTScannerStatusIngestTests {
    @Test("The format's status filter by default; none for a custom topic, a named scanner or 'none'; an explicit one as given")
    func filters() {
        #expect(MQTTSourceConfiguration(format: .espresense).statusFilter == "espresense/rooms/+/status")
        #expect(MQTTSourceConfiguration(format: .theengs).statusFilter == "home/+/LWT")
        #expect(MQTTSourceConfiguration(format: .regionkit).statusFilter == "regionkit/scanners/+/status")
        #expect(MQTTSourceConfiguration(format: .espresense, topic: "lab/espresense/devices/+/+").statusFilter == nil)
        #expect(MQTTSourceConfiguration(format: .theengs, scanner: "garage").statusFilter == nil)
        #expect(MQTTSourceConfiguration(format: .espresense, status: "none").statusFilter == nil)
        #expect(MQTTSourceConfiguration(format: .espresense, topic: "lab/+/+", status: "lab/rooms/+/status").statusFilter == "lab/rooms/+/status")
    }

    @Test("A status filter must name its scanner by a '+' (or the source's scanner), and hold no '#'")
    func problems() {
        #expect(MQTTSourceConfiguration(format: .espresense).problem == nil)
        #expect(MQTTSourceConfiguration(format: .espresense, status: "espresense/rooms/kitchen/status").problem?.contains("'+' level must name the scanner") == true)
        #expect(MQTTSourceConfiguration(format: .espresense, scanner: "kitchen", status: "espresense/rooms/kitchen/status").problem == nil)
        #expect(MQTTSourceConfiguration(format: .espresense, status: "espresense/#").problem?.contains("no '#'") == true)
        #expect(MQTTSourceConfiguration(format: .espresense, status: "espresense/+x/status").problem?.hasPrefix("status: ") == true)
        #expect(MQTTSourceConfiguration(format: .theengs, topic: "+/+/BTtoMQTT/+", status: "+/+/LWT").problem?.contains("one '+' level must name the scanner") == true,
                "two '+' levels: which names the gateway is left unsaid")
    }

    @Test("A status filter that would take a source's sightings is refused, naming both; one that does not is accepted")
    func overlap() throws {
        func decode(_ sources: String) throws -> ServiceConfiguration {
            try ServiceConfiguration.decode("sources:\n\(sources)\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}\n", path: "c.yaml")
        }
        _ = try decode("  - mqtt: {format: espresense}\n  - mqtt: {format: theengs}")
        _ = try decode("  - mqtt: {format: espresense, topic: \"espresense/#\", status: \"espresense/rooms/+/status\"}")
        let error = #expect(throws: RegionKitError.self) {
            try decode("  - mqtt: {format: theengs}\n  - mqtt: {format: espresense, status: \"espresense/devices/+/kitchen\"}")
        }
        #expect(error?.message == "c.yaml: sources[1].mqtt.status 'espresense/devices/+/kitchen' would also take the sightings of sources[1] ('espresense/devices/+/+'): give a status topic of its own",
                "\(error?.message ?? "no error")")
        let other = #expect(throws: RegionKitError.self) {
            try decode("  - mqtt: {format: espresense, topic: \"lab/+/status\"}\n  - mqtt: {format: theengs, status: \"lab/+/status\"}")
        }
        #expect(other?.message.hasPrefix("c.yaml: sources[1].mqtt.status 'lab/+/status' would also take the sightings of sources[0]") == true, "\(other?.message ?? "no error")")
    }

    @Test("A site whose own topics a source would take as sightings is refused, naming both (site 'scanners': the hub read its own events as rejected batches of regionkit/scanners/+)")
    func siteTakenBySources() throws {
        func decode(_ sources: String, site: String) throws -> ServiceConfiguration {
            try ServiceConfiguration.decode("sources:\n\(sources)\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: \(site)}\n", path: "c.yaml")
        }
        _ = try decode("  - mqtt: {format: regionkit}", site: "home")
        _ = try decode("  - mqtt: {format: regionkit, topic: \"regionkit/#\"}", site: "home")
        let error = #expect(throws: RegionKitError.self) { try decode("  - mqtt: {format: espresense}\n  - mqtt: {format: regionkit}", site: "scanners") }
        #expect(error?.message == "c.yaml: sources[1].mqtt: 'regionkit/scanners/+' would take the hub's own topic 'regionkit/scanners/events' (mqtt.site 'scanners'): give the site another name, or the source another topic",
                "\(error?.message ?? "no error")")
        // A status filter too: the hub's status topic is regionkit/<site>/status.
        let status = #expect(throws: RegionKitError.self) {
            try decode("  - mqtt: {format: espresense, topic: \"espresense/devices/+/+\", status: \"regionkit/+/status\"}", site: "home")
        }
        #expect(status?.message.contains("'regionkit/+/status' would take the hub's own topic 'regionkit/home/status'") == true, "\(status?.message ?? "no error")")
    }

    @Test("A status reaches the engine, retained or not, after the sightings batched before it; a bad one is counted and rejected, the good ones around it applied")
    func applied() throws {
        let (manager, _) = MQTTSightingBatchTests.manager()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense, topic: "espresense/#")], manager: manager,
                                        logger: Logger(label: "test"), batching: true)
        #expect(ingest.statusFilters.isEmpty, "a custom topic: no default status")
        let reading = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense, topic: "espresense/#", status: "espresense/rooms/+/status")],
                                         manager: manager, logger: Logger(label: "test"), batching: true)
        #expect(reading.statusFilters == ["espresense/rooms/+/status"] && reading.topicFilters == ["espresense/#"])
        let (topic, payload) = MQTTSightingBatchTests.message(minor: 1)
        reading.handle(topic: topic, payload: payload)
        #expect(manager.engineSnapshot.channel(of: "kitchen") == nil, "batched, not yet heard")
        reading.handle(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), retained: true)
        // The sighting went first (the channel heard it), then the status.
        #expect(manager.engineSnapshot.channel(of: "kitchen")?.lastHeard != nil)
        #expect(manager.offlineScanners == ["kitchen"])
        reading.handle(topic: "espresense/rooms/kitchen/status", payload: Array("rebooting".utf8))
        reading.handle(topic: "espresense/rooms/hall/status", payload: Array("offline".utf8))
        #expect(manager.offlineScanners == ["hall", "kitchen"])
        reading.handle(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8))
        #expect(manager.offlineScanners == ["hall"])
        let statistics = reading.statistics
        #expect(statistics.statuses == 3 && statistics.rejected == [.badStatus: 1] && statistics.sightings == 1, "\(statistics)")
        #expect(statistics.ignored.isEmpty, "a retained status is applied, not ignored")
        reading.skipped(topic: "espresense/rooms/hall/status", size: 300_000, retained: true)
        #expect(reading.statistics.rejected[.tooLarge] == 1)
    }

    @Test("RegionKit's own scanners: the status level is read back to the name their batches carry ('Living Room', not 'Living%20Room'), beside the batches' filter")
    func regionkitScanners() throws {
        let (manager, _) = MQTTSightingBatchTests.manager()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .regionkit), MQTTSourceConfiguration(format: .espresense)],
                                        manager: manager, logger: Logger(label: "test"), batching: true)
        #expect(ingest.topicFilters == ["regionkit/scanners/+", "espresense/devices/+/+"])
        #expect(ingest.statusFilters == ["regionkit/scanners/+/status", "espresense/rooms/+/status"])
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        var batch = ScannerBatch(scanner: "Living Room", time: 1_763_884_800)
        batch.sightings = [.init(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 2), rssi: -60, measuredPower: nil, offset: 0)]
        ingest.handle(topic: ScannerBatch.topic(scanner: "Living Room"), payload: batch.json())
        ingest.handle(topic: ScannerBatch.statusTopic(scanner: "Living Room"), payload: Array("offline".utf8), retained: true)
        #expect(manager.engineSnapshot.channel(of: "Living Room")?.lastHeard != nil, "the batch heard first, by the name it carries")
        #expect(manager.offlineScanners == ["Living Room"])
        // An ESPresense room's level is its name as it stands.
        ingest.handle(topic: "espresense/rooms/Living%20Room/status", payload: Array("offline".utf8))
        #expect(manager.offlineScanners == ["Living Room", "Living%20Room"])
        ingest.handle(topic: "regionkit/scanners/Living%2/status", payload: Array("online".utf8))
        #expect(ingest.statistics.rejected == [.badTopic: 1], "\(ingest.statistics)")
        ingest.handle(topic: ScannerBatch.statusTopic(scanner: "Living Room"), payload: Array("online".utf8))
        #expect(manager.offlineScanners == ["Living%20Room"])
        // A source of its own '#' reads no status, and takes the status topics for no batch
        // (ignored, not rejected as a damaged one).
        let broad = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .regionkit, topic: "regionkit/scanners/#")],
                                       manager: manager, logger: Logger(label: "test"), batching: true)
        #expect(broad.statusFilters.isEmpty)
        // (Live, as the broker forwards a status published while the hub is subscribed: a
        // retained message on a sighting filter is ignored before any decoding.)
        broad.handle(topic: ScannerBatch.statusTopic(scanner: "Living Room"), payload: Array("offline".utf8))
        broad.flush()
        #expect(broad.statistics.rejectedTotal == 0 && broad.statistics.ignored.values.reduce(0, +) == 1
                && broad.statistics.ignored.keys.first?.hasPrefix("a scanner's status") == true, "\(broad.statistics)")
        #expect(manager.offlineScanners == ["Living%20Room"], "not read as a status either")
        // Both formats' default filters in one configuration: no overlap.
        _ = try ServiceConfiguration.decode("sources:\n  - mqtt: {format: regionkit}\n  - mqtt: {format: espresense}\nmqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}\n",
                                            path: "c.yaml")
    }

    @Test("A status change is logged once per change, at most 20 a minute: a flood of invented room names is counted, and said so once the minute is over")
    func logBounded() throws {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .responsive, clock: clock, sources: [.beacon: .authorized])
        let lines = InMemoryLogHandler.Store()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense)], manager: manager,
                                        logger: Logger(label: "test") { _ in InMemoryLogHandler(store: lines) })
        ingest.handle(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), retained: true)
        ingest.handle(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), retained: true)
        #expect(lines.all.filter { $0.contains("scanner offline") }.count == 1, "the same status again (a resubscription): not logged again")
        for index in 0..<30 {
            ingest.handle(topic: "espresense/rooms/invented-\(index)/status", payload: Array("offline".utf8))
        }
        #expect(lines.all.filter { $0.contains("scanner offline") }.count == MQTTSightingIngest.statusLogsPerMinute, "\(lines.text)")
        #expect(manager.offlineScanners.count == 31, "every one applied")
        clock.advance(by: 61)
        ingest.handle(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8))
        let summary = try #require(lines.all.first { $0.contains("not logged in the last minute") }, "\(lines.text)")
        #expect(summary.contains("unlogged=11"), "\(summary)")
        #expect(lines.all.last?.contains("scanner online") == true && lines.all.last?.contains("scanner=kitchen") == true)
    }
}
