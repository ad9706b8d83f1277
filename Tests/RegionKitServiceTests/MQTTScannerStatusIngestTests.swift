import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitEngine
@testable import RegionKitService

/// The MQTT sources' scanner status (``MQTTSourceConfiguration/statusFilter``): which filter is
/// read, and what the ingest does with its messages.
@Suite("MQTT ingest: the scanners' status")
struct MQTTScannerStatusIngestTests {
    @Test("The format's status filter by default; none for a custom topic, a named scanner or 'none'; an explicit one as given")
    func filters() {
        #expect(MQTTSourceConfiguration(format: .espresense).statusFilter == "espresense/rooms/+/status")
        #expect(MQTTSourceConfiguration(format: .theengs).statusFilter == "home/+/LWT")
        #expect(MQTTSourceConfiguration(format: .regionkit).statusFilter == nil, "RegionKit's scanners publish none")
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
}
