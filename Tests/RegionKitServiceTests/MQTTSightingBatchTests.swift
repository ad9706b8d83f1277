import Foundation
import Logging
import RegionKitConcurrency
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitEngine
@testable import RegionKitService

/// With `batching`, the sightings of the messages handled before `flush()` reach the engine in
/// one call, so their events are delivered as one batch — what lets the event log commit them in
/// one transaction (the hub flushes after each read from the broker).
@Suite("MQTT ingest: one read's sightings as one batch")
struct MQTTSightingBatchTests {
    /// The number of events of each delivered batch.
    final class BatchRecorder: LocationManagerDelegate {
        let batches = LockedBox<[Int]>([])
        private let current = LockedBox(0)
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
            current.withLock { $0 += 1 }
        }
        func locationManagerDidFinishDelivering(_ manager: LocationManager) {
            let count = current.withLock { count in defer { count = 0 }; return count }
            batches.withLock { $0.append(count) }
        }
    }

    static func message(minor: Int) -> (topic: String, payload: [UInt8]) {
        let id = ESPresenseMessage.id(for: BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: UInt16(minor)))
        return ("espresense/devices/\(id)/kitchen", Array(#"{"id":"\#(id)","rssi":-60,"rssi@1m":-59}"#.utf8))
    }

    static func manager() -> (LocationManager, BatchRecorder) {
        var profile = MonitoringProfile.responsive
        profile.nearestScanner = NearestScannerPolicy()   // a new beacon is placed at its first sighting: an event each
        let manager = LocationManager(profile: profile, clock: VirtualClock(), sources: [.beacon: .authorized])
        let recorder = BatchRecorder()
        manager.delegate = recorder
        return (manager, recorder)
    }

    @Test("five messages, one flush: one delivery of five events; without batching, five deliveries of one")
    func oneBatchPerFlush() {
        let (manager, recorder) = Self.manager()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense)], manager: manager,
                                        logger: Logger(label: "test"), batching: true)
        for minor in 1...5 {
            let (topic, payload) = Self.message(minor: minor)
            ingest.handle(topic: topic, payload: payload)
        }
        #expect(ingest.statistics.sightings == 5, "counted as they are handled")
        #expect(recorder.batches.withLock { $0 }.isEmpty, "nothing reaches the engine before the flush")
        ingest.flush()
        #expect(recorder.batches.withLock { $0 } == [5])
        ingest.flush()
        #expect(recorder.batches.withLock { $0 } == [5], "an empty flush delivers nothing")

        let (unbatchedManager, unbatched) = Self.manager()
        let immediate = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense)], manager: unbatchedManager,
                                           logger: Logger(label: "test"))
        for minor in 1...5 {
            let (topic, payload) = Self.message(minor: minor)
            immediate.handle(topic: topic, payload: payload)
        }
        #expect(unbatched.batches.withLock { $0 } == [1, 1, 1, 1, 1])
    }

    @Test("a batch reaching batchLimit goes at once; a batch pending at stop() is dropped, as later messages are")
    func limitAndStop() {
        let (manager, recorder) = Self.manager()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .espresense)], manager: manager,
                                        logger: Logger(label: "test"), batching: true)
        for minor in 0..<MQTTSightingIngest.batchLimit {
            let (topic, payload) = Self.message(minor: minor)
            ingest.handle(topic: topic, payload: payload)
        }
        #expect(recorder.batches.withLock { $0 } == [MQTTSightingIngest.batchLimit])
        let (topic, payload) = Self.message(minor: 60_000)
        ingest.handle(topic: topic, payload: payload)
        ingest.stop()
        ingest.flush()
        #expect(recorder.batches.withLock { $0 } == [MQTTSightingIngest.batchLimit])
    }
}
