import Foundation
import Testing
@testable import RegionKitBluetooth
import RegionKitCore
import RegionKitHCI

/// The pipeline reads one-report advertising events in place (no allocation) and sends every
/// other shape through the full HCIEvent decoder. Both paths must give the same observations and
/// statistics: seeded random event streams — legacy and extended, scan responses repeating an
/// advertisement or not, iBeacons, near-misses, other advertisers, truncated data, RSSI not
/// available, several reports per event, damaged packets — go through both and are compared.
@Suite("Beacon report pipeline: fast path identical to the full decoder")
struct BeaconReportPipelineTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func randomData(_ rng: inout SeededRandom) -> [UInt8] {
        let identity = BeaconIdentity(uuid: uuid, major: UInt16.random(in: 0...3, using: &rng), minor: UInt16.random(in: 0...3, using: &rng))
        let power = Int8.random(in: -70 ... -50, using: &rng)
        var data: [UInt8]
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: data = AltBeaconFrame(identity: identity, referenceRSSI: power).advertisingData()
        case 1: data = EddystoneFrame.uid(EddystoneUIDFrame(identity: BeaconIdentity(uuid: uuid, major: 0, minor: identity.minor, format: .eddystoneUID),
                                                            rangingData: power)).advertisingData()
        case 2: data = EddystoneFrame.tlm(EddystoneTelemetry(batteryMillivolts: UInt16(3000 + identity.minor), temperatureRaw: Int16(identity.major) << 8,
                                                             advertisingCount: UInt32(identity.minor), uptimeDeciseconds: 10)).advertisingData()
        default: data = IBeaconFrame(identity: identity, measuredPower: power).advertisingData()
        }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: data[6] = 0x4D                                    // another company
        case 1: data[7] = 0x03                                    // another Apple type
        case 2: data = Array(data.prefix(Int.random(in: 0..<data.count, using: &rng)))   // cut short
        case 3: data = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE] // not a beacon at all
        case 4: data += [0x05, 0x09, 0x61, 0x62, 0x63, 0x64]      // plus a local name
        case 5: data[Int.random(in: 0..<data.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        default: break
        }
        return data
    }

    static func randomEvent(_ rng: inout SeededRandom, previous: inout [UInt8]) -> [UInt8] {
        let address = BluetoothAddress(bytes: [0xC0, 0, 0, 0, 0, UInt8.random(in: 0...3, using: &rng)])!
        // Often a scan response repeating the previous data (Bumble reports every frame twice).
        let data = Int.random(in: 0..<3, using: &rng) == 0 ? previous : randomData(&rng)
        previous = data
        let rssi: Int8 = Int.random(in: 0..<12, using: &rng) == 0 ? 127 : Int8.random(in: -95 ... -40, using: &rng)
        let count = Int.random(in: 0..<8, using: &rng) == 0 ? 2 : 1
        var bytes: [UInt8]
        if Bool.random(using: &rng) {
            let reports = (0..<count).map { _ in
                LEAdvertisingReport(eventType: [.advInd, .advNonconnInd, .scanRsp, .advScanInd].randomElement(using: &rng)!,
                                    addressType: .random, address: address, data: data, rawRSSI: rssi)
            }
            bytes = HCIEvent.leMeta(.advertisingReport(reports)).encoded(advertisingReportLayout: .reportByReport)
        } else {
            let reports = (0..<count).map { _ in
                LEExtendedAdvertisingReport(eventType: [.legacy, [.scannable, .scanResponse], .connectable, []].randomElement(using: &rng)!,
                                            addressType: .random, address: address, rawRSSI: rssi, data: data)
            }
            bytes = HCIEvent.leMeta(.extendedAdvertisingReport(reports)).encoded()
        }
        if Int.random(in: 0..<30, using: &rng) == 0 {   // damaged: a wrong length byte or a lost tail
            if Bool.random(using: &rng) { bytes[1] &+= 1 } else { bytes.removeLast() }
        }
        return bytes
    }

    @Test("seeded random event streams give the same observations and statistics on both paths")
    func fastPathMatchesDecoder() {
        for seed in UInt64(1)...5 {
            var rng = SeededRandom(seed: seed)
            var fast = BeaconReportPipeline(scannerID: "hall", layout: .reportByReport)
            var full = fast
            var fastSeen: [BeaconObservation] = []
            var fullSeen: [BeaconObservation] = []
            var previous: [UInt8] = []
            for step in 0..<3_000 {
                let event = Self.randomEvent(&rng, previous: &previous)
                let time = Timestamp(seconds: Double(step) * 0.01)
                event.withUnsafeBytes { fast.process(event: $0, at: time) { fastSeen.append($0) } }
                if let decoded = try? HCIEvent(decoding: event, advertisingReportLayout: .reportByReport) {
                    full.process(decoded, at: time, sighting: nil) { fullSeen.append($0) }
                } else {
                    full.statistics.malformedEvents += 1
                }
            }
            #expect(fastSeen == fullSeen, "seed \(seed)")
            #expect(fast.statistics == full.statistics, "seed \(seed)")
            #expect(fast.telemetry == full.telemetry, "seed \(seed)")
            #expect(fast.statistics.otherBeaconFrames > 200 && fast.statistics.telemetryFrames > 100, "seed \(seed): \(fast.statistics)")
            #expect(fastSeen.contains { $0.identity.format == .eddystoneUID && $0.telemetry != nil }, "seed \(seed): no telemetry attached")
            #expect(fast.statistics.scanResponseRepeats > 50 && fast.statistics.observations > 500 && fast.statistics.malformedEvents > 20,
                    "seed \(seed): the stream exercised too little: \(fast.statistics)")
        }
    }

    @Test("one legacy report, byte by byte: an iBeacon observation with its RSSI and measured power")
    func legacyReportBytes() {
        let frame = IBeaconFrame(identity: BeaconIdentity(uuid: Self.uuid, major: 7, minor: 9), measuredPower: -61)
        let data = frame.advertisingData()
        let event: [UInt8] = [
            0x3E,                               // LE Meta event
            UInt8(12 + data.count),             // parameter length
            0x02,                               // LE Advertising Report subevent
            0x01,                               // Num_Reports
            0x03,                               // Event_Type: ADV_NONCONN_IND
            0x01,                               // Address_Type: random
            0x06, 0x05, 0x04, 0x03, 0x02, 0xC1, // Address C1:02:03:04:05:06, LSB first
            UInt8(data.count),                  // Data_Length
        ] + data + [
            0xBA,                               // RSSI −70 dBm
        ]
        var pipeline = BeaconReportPipeline(scannerID: "hall")
        var seen: [BeaconObservation] = []
        event.withUnsafeBytes { pipeline.process(event: $0, at: Timestamp(seconds: 3)) { seen.append($0) } }
        #expect(seen == [BeaconObservation(identity: frame.identity, rssi: -70, measuredPower: -61, timestamp: Timestamp(seconds: 3), scannerID: "hall")])
        #expect(pipeline.statistics.iBeaconFrames == 1 && pipeline.statistics.frames == 1)
    }

    @Test("an Eddystone-TLM frame attaches to the next beacon observation from the same address only")
    func telemetryByAddress() throws {
        let uid = EddystoneFrame.uid(EddystoneUIDFrame(identity: try #require(BeaconIdentity(eddystoneNamespace: [UInt8](repeating: 0x11, count: 10),
                                                                                          instance: [0, 0, 0, 0, 0, 7])), rangingData: -20))
        let tlm = EddystoneTelemetry(batteryMillivolts: 2900, temperatureRaw: 0x1740, advertisingCount: 5, uptimeDeciseconds: 50)
        func event(_ data: [UInt8], address last: UInt8) -> [UInt8] {
            [0x3E,                                  // LE Meta event
             UInt8(12 + data.count),                // parameter length
             0x02,                                  // LE Advertising Report
             0x01,                                  // Num_Reports
             0x03,                                  // ADV_NONCONN_IND
             0x00,                                  // public address
             last, 0x00, 0x00, 0xEE, 0xFF, 0xC0,    // C0:FF:EE:00:00:<last>, LSB first
             UInt8(data.count)] + data + [0xC4]      // Data_Length, Data, RSSI −60
        }
        var pipeline = BeaconReportPipeline(scannerID: nil)
        var seen: [BeaconObservation] = []
        for (step, packet) in [event(uid.advertisingData(), address: 1),                       // before any TLM: none attached
                               event(EddystoneFrame.tlm(tlm).advertisingData(), address: 1),   // TLM from ...:01
                               event(uid.advertisingData(), address: 1),                       // attached
                               event(uid.advertisingData(), address: 2)].enumerated() {        // another address: not attached
            packet.withUnsafeBytes { pipeline.process(event: $0, at: Timestamp(seconds: Double(step))) { seen.append($0) } }
        }
        #expect(seen.map(\.telemetry) == [nil, tlm, nil])
        #expect(seen.allSatisfy { $0.identity == BeaconFrame.eddystone(uid).identity && $0.measuredPower == -61 && $0.rssi == -60 })
        #expect(pipeline.statistics.telemetryFrames == 1 && pipeline.statistics.otherBeaconFrames == 3 && pipeline.statistics.iBeaconFrames == 0)
    }

    @Test("telemetry expires: after telemetryMaximumAge (600 s) without TLM from an address, none is attached; a new TLM attaches again")
    func telemetryExpires() throws {
        let uid = EddystoneFrame.uid(EddystoneUIDFrame(identity: try #require(BeaconIdentity(eddystoneNamespace: [UInt8](repeating: 0x11, count: 10),
                                                                                          instance: [0, 0, 0, 0, 0, 7])), rangingData: -20))
        let first = EddystoneTelemetry(batteryMillivolts: 2900, temperatureRaw: 0x1740, advertisingCount: 5, uptimeDeciseconds: 50)
        let second = EddystoneTelemetry(batteryMillivolts: 2800, temperatureRaw: 0x1600, advertisingCount: 9, uptimeDeciseconds: 7000)
        func event(_ data: [UInt8]) -> [UInt8] {
            [0x3E, UInt8(12 + data.count), 0x02, 0x01, 0x03, 0x00,   // LE Meta, length, Advertising Report, 1 report, ADV_NONCONN_IND, public
             0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0,                     // C0:FF:EE:00:00:01, LSB first
             UInt8(data.count)] + data + [0xC4]                       // Data_Length, Data, RSSI −60
        }
        for fullDecoder in [false, true] {
            var pipeline = BeaconReportPipeline(scannerID: nil)
            var seen: [EddystoneTelemetry?] = []
            // (seconds, frame): TLM at 0; UID at 1, 600 (exactly the age: kept), 600.5 (expired); TLM at 700; UID at 701.
            for (time, frame) in [(0.0, EddystoneFrame.tlm(first)), (1, uid), (600, uid), (600.5, uid), (700, .tlm(second)), (701, uid)] {
                let packet = event(frame.advertisingData())
                if fullDecoder {
                    let decoded = try HCIEvent(decoding: packet)
                    pipeline.process(decoded, at: Timestamp(seconds: time), sighting: nil) { seen.append($0.telemetry) }
                } else {
                    packet.withUnsafeBytes { pipeline.process(event: $0, at: Timestamp(seconds: time)) { seen.append($0.telemetry) } }
                }
            }
            #expect(seen == [first, first, nil, second], "full decoder: \(fullDecoder)")
            #expect(pipeline.telemetry.count == 1 && pipeline.telemetry.first?.value.heardAt == Timestamp(seconds: 700))
        }
        // A shorter age, as configured.
        var quick = BeaconReportPipeline(scannerID: nil)
        quick.telemetryMaximumAge = 5
        var seen: [EddystoneTelemetry?] = []
        for (time, frame) in [(0.0, EddystoneFrame.tlm(first)), (5, uid), (5.1, uid)] {
            event(frame.advertisingData()).withUnsafeBytes { quick.process(event: $0, at: Timestamp(seconds: time)) { seen.append($0.telemetry) } }
        }
        #expect(seen == [first, nil])
        #expect(quick.telemetry.isEmpty, "the expired entry is dropped")
    }

    @Test("a custom layout's beacon becomes an observation when its identifiers have a format's shape")
    func customLayoutObservation() throws {
        // A vendor frame: company 0x0059, code 0x1234, id1 16 bytes, id2, id3, power (AltBeacon-shaped ids).
        let layout = try BeaconLayout("m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24")
        let data: [UInt8] = [0x1A, 0xFF, 0x59, 0x00, 0x12, 0x34] + IBeaconFrameTestsUUID.bytes + [0x00, 0x05, 0x00, 0x06, 0xC5]
        var event: [UInt8] = [0x3E, UInt8(12 + data.count), 0x02, 0x01, 0x03, 0x00, 1, 0, 0, 0, 0, 0xC0, UInt8(data.count)] + data + [0xC4]
        var pipeline = BeaconReportPipeline(scannerID: nil, layouts: [layout])
        var seen: [BeaconObservation] = []
        event.withUnsafeBytes { pipeline.process(event: $0, at: .zero) { seen.append($0) } }
        #expect(seen.map(\.identity) == [BeaconIdentity(uuid: Self.uuid, major: 5, minor: 6, format: .altBeacon)])
        #expect(seen.first?.measuredPower == -59)
        event[6] = 2
        var without = BeaconReportPipeline(scannerID: nil)
        event.withUnsafeBytes { without.process(event: $0, at: .zero) { seen.append($0) } }
        #expect(seen.count == 1)
    }

    @Test("the Android Beacon Library's iBeacon layout turns a non-Apple iBeacon-shaped frame into an iBeacon observation; a format prefix overrides")
    func iBeaconShapedLayoutObservation() throws {
        let data: [UInt8] = [0x1A, 0xFF,                  // Manufacturer Specific Data, 26 bytes
                             0x59, 0x00,                  // company 0x0059: not Apple, so the iBeacon codec does not take it
                             0x02, 0x15]                  // iBeacon type and length
            + IBeaconFrameTestsUUID.bytes                 // proximity UUID
            + [0x00, 0x05, 0x00, 0x06,                    // major 5, minor 6
               0xC5]                                      // measured power -59
        let event: [UInt8] = [0x3E, UInt8(12 + data.count), 0x02, 0x01, 0x03, 0x00, 1, 0, 0, 0, 0, 0xC0, UInt8(data.count)] + data + [0xC4]
        for (text, format) in [("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", BeaconFormat.iBeacon),
                               ("altbeacon:m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", .altBeacon)] {
            var pipeline = BeaconReportPipeline(scannerID: nil, layouts: [try BeaconLayout(tagged: text)])
            var seen: [BeaconObservation] = []
            event.withUnsafeBytes { pipeline.process(event: $0, at: .zero) { seen.append($0) } }
            #expect(seen.map(\.identity) == [BeaconIdentity(uuid: Self.uuid, major: 5, minor: 6, format: format)], "\(text)")
            // Counted once, by the format it was decoded as.
            #expect(pipeline.statistics.iBeaconFrames == (format == .iBeacon ? 1 : 0) && pipeline.statistics.otherBeaconFrames == (format == .iBeacon ? 0 : 1), "\(text)")
        }
    }
}

/// The 16 bytes of ``BeaconReportPipelineTests/uuid``.
enum IBeaconFrameTestsUUID {
    static let bytes: [UInt8] = withUnsafeBytes(of: BeaconReportPipelineTests.uuid.uuid) { Array($0) }
}
