import ArgumentParser
import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitBluetooth
import RegionKitHCI

/// One timed pass of the ingest pipeline.
struct IngestRun {
    var reports: Int
    var observations: Int
    var events: Int
    var seconds: Double

    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func identity(_ index: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: UInt16(index / 1000), minor: UInt16(index % 1000))
    }

    /// An engine monitoring one region per beacon plus one UUID-wide region.
    static func engine(beacons: Int) throws -> MonitoringEngine {
        var engine = MonitoringEngine(profile: .responsive, sources: [.beacon: .authorized])
        _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "all", uuid: uuid)), at: .zero)
        for index in 0..<beacons {
            let id = identity(index)
            _ = engine.startMonitoring(.beacon(try BeaconRegion(identifier: "b\(index)", uuid: uuid, major: id.major, minor: id.minor)), at: .zero)
        }
        return engine
    }

    /// The HCI LE Advertising Report event (one legacy ADV_NONCONN_IND report) of beacon `index`.
    static func event(beacon index: Int, rssi: Int8) -> [UInt8] {
        let frame = IBeaconFrame(identity: identity(index), measuredPower: -59)
        let address = BluetoothAddress(bytes: [0xC0, 0, 0, UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)])!
        let report = LEAdvertisingReport(eventType: .advNonconnInd, addressType: .random, address: address,
                                         data: frame.advertisingData(), rawRSSI: rssi)
        return HCIEvent.leMeta(.advertisingReport([report])).encoded()
    }

    /// A non-iBeacon advertisement (Eddystone-like service data) from the same population.
    static func otherEvent(_ index: Int, rssi: Int8) -> [UInt8] {
        let address = BluetoothAddress(bytes: [0xD0, 0, 0, UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)])!
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x0B, 0x16, 0xAA, 0xFE, 0x10, 0xEB, 0x01, 0x61, 0x62, 0x63, 0x64, 0x07]
        let report = LEAdvertisingReport(eventType: .advNonconnInd, addressType: .random, address: address, data: data, rawRSSI: rssi)
        return HCIEvent.leMeta(.advertisingReport([report])).encoded()
    }

    static func measure(beacons: Int, reports: Int, seed: UInt64) throws -> IngestRun {
        var engine = try engine(beacons: beacons)
        var random = SeededRandom(seed: seed)
        // Pre-encode every report into one contiguous buffer (offsets alongside), so the timed
        // loop reads memory the way a socket buffer would be read, with no harness allocation.
        var buffer: [UInt8] = []
        var offsets: [Int] = [0]
        buffer.reserveCapacity(reports * 44)
        offsets.reserveCapacity(reports + 1)
        // One template event per beacon (and a few other advertisers); each report is a copy
        // with its own RSSI byte (the last byte of a one-report legacy event).
        let templates = (0..<beacons).map { event(beacon: $0, rssi: -60) }
        let others = (0..<16).map { otherEvent($0, rssi: -60) }
        for index in 0..<reports {
            let rssi = UInt8(bitPattern: Int8(-60 - Int(random.uniform() * 20)))
            let beacon = index < beacons ? index : Int(random.uniform() * Double(beacons))
            buffer += index % 16 == 15 ? others[beacon % 16] : templates[beacon]
            buffer[buffer.count - 1] = rssi
            offsets.append(buffer.count)
        }
        let step = 1 / (10 * Double(beacons))
        var pipeline = BeaconReportPipeline(scannerID: nil)
        var events = 0
        var observations = 0
        let start = ContinuousClock.now
        buffer.withUnsafeBytes { raw in
            for index in 0..<reports {
                let time = Timestamp(seconds: Double(index) * step)
                let event = UnsafeRawBufferPointer(rebasing: raw[offsets[index]..<offsets[index + 1]])
                pipeline.process(event: event, at: time) { observation in
                    observations += 1
                    events += engine.ingest(observation).count
                }
            }
        }
        let elapsed = start.duration(to: .now)
        events += engine.advance(to: Timestamp(seconds: Double(reports) * step + 120)).count
        return IngestRun(reports: reports, observations: observations, events: events,
                         seconds: elapsed.inSeconds)
    }
}
