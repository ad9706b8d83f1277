import Testing
@testable import RegionKitBluetooth

@Suite("Scan-response repeats: one frame on the air counts once")
struct ScanResponseDeduplicatorTests {
    static func advertisement(_ event: HCIEvent) -> Advertisement { event.advertisements[0] }
    let t0 = Timestamp(seconds: 100)

    @Test("Legacy: ADV_IND then a SCAN_RSP with the same data (Bumble's pair) is one frame; the next ADV_IND is a new one")
    func legacyPair() {
        var filter = ScanResponseDeduplicator()
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advInd)), at: t0); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp)), at: t0 + 0.001); #expect(repeated) }
        // A second copy is not absorbed by the same advertisement.
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp)), at: t0 + 0.002); #expect(!repeated) }
        // The beacon's next frame 100 ms later, same bytes: a new sighting.
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advInd)), at: t0 + 0.1); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advNonconnInd)), at: t0 + 0.2); #expect(!repeated) }
    }

    @Test("Extended reports: the scan-response bit plays SCAN_RSP's role")
    func extendedPair() {
        var filter = ScanResponseDeduplicator()
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.extendedReport([.connectable])), at: t0); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.extendedReport([.connectable, .scannable, .scanResponse])), at: t0 + 0.0002); #expect(repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.extendedReport([.connectable])), at: t0 + 0.1); #expect(!repeated) }
    }

    @Test("A scan response carrying other data (a local name), from another address, or late, is a frame of its own")
    func distinctResponses() {
        var filter = ScanResponseDeduplicator(window: 0.5)
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advScanInd)), at: t0); #expect(!repeated) }
        let name: [UInt8] = [0x05, 0x09, 0x64, 0x65, 0x73, 0x6B] // Complete Local Name "desk"
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp, data: name)), at: t0 + 0.001); #expect(!repeated) }
        let other = BluetoothAddress("C0:FF:EE:00:00:02")!
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp, address: other)), at: t0 + 0.002); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advInd)), at: t0 + 1); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp)), at: t0 + 1.6); #expect(!repeated) } // 0.6 s > window
    }

    @Test("A scan response with no advertisement before it is a frame; reset() forgets pairs")
    func orphanAndReset() {
        var filter = ScanResponseDeduplicator()
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp)), at: t0); #expect(!repeated) }
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.advInd)), at: t0 + 0.1); #expect(!repeated) }
        filter.reset()
        do { let repeated = filter.isRepeat(Self.advertisement(Sample.legacyReport(.scanRsp)), at: t0 + 0.101); #expect(!repeated) }
    }

    @Test("A bad window falls back to the default instead of trapping or disabling the filter")
    func badWindow() {
        #expect(ScanResponseDeduplicator(window: .nan).window == ScanResponseDeduplicator.defaultWindow)
        #expect(ScanResponseDeduplicator(window: -1).window == ScanResponseDeduplicator.defaultWindow)
    }

    /// The answers of the filter before its flat table: every advertiser's last advertisement
    /// kept for ever (forgetting stale ones can never change an answer while time runs forward).
    struct Model {
        var last: [UInt64: (data: [UInt8], time: Double, absorbed: Bool)] = [:]
        let window: Double

        mutating func isRepeat(key: UInt64, scanResponse: Bool, data: [UInt8], time: Double) -> Bool {
            guard scanResponse else {
                last[key] = (data, time, false)
                return false
            }
            guard let previous = last[key], !previous.absorbed, previous.data == data,
                  time - previous.time <= window, time >= previous.time else { return false }
            last[key]?.absorbed = true
            return true
        }
    }

    @Test("Against a model that forgets nothing: a pool of beacons, a flood of one-off addresses, long data differing after byte 32",
          arguments: [UInt64(1), 2, 3])
    func againstModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var filter = ScanResponseDeduplicator(window: 0.5)
        var model = Model(window: 0.5)
        let long = Array(repeating: UInt8(0x42), count: 40)
        var tailChanged = long
        tailChanged[39] = 0x43   // same first 32 bytes: only the tail hash tells them apart
        let payloads: [[UInt8]] = [Sample.iBeaconData, [0x05, 0x09, 0x64, 0x65, 0x73, 0x6B], long, tailChanged, []]
        var time = 100.0, fresh: UInt64 = 0x10_0000, repeats = 0
        var previous: (address: UInt64, addressType: UInt8, data: [UInt8]) = (0, 0, [])
        for step in 0..<20_000 {
            // 0 to 20 ms apart, one in eight at the same instant.
            if random.next() % 8 != 0 { time += random.uniform() * 0.02 }
            var address: UInt64, addressType = UInt8(random.next() % 2), scanResponse = random.next() % 5 < 2
            var data = payloads[Int(random.next() % UInt64(payloads.count))]
            switch random.next() % 10 {
            case 0..<3:
                // The scan response to the report just before (a pair, when that was an advertisement).
                (address, addressType, data) = previous
                scanResponse = true
            case 3..<8:
                address = 0xC0FF_EE00_0000 + random.next() % 20
            default:
                fresh += 1
                address = fresh
            }
            previous = (address, addressType, data)
            let answer = data.withUnsafeBytes {
                filter.isRepeat(address: address, addressType: addressType, isScanResponse: scanResponse, data: $0, at: Timestamp(seconds: time))
            }
            let expected = model.isRepeat(key: address | UInt64(addressType) << 48, scanResponse: scanResponse, data: data, time: time)
            #expect(answer == expected, "step \(step): address \(address), type \(addressType), scan response \(scanResponse), \(data.count) bytes")
            if answer != expected { return }
            if answer { repeats += 1 }
        }
        #expect(repeats > 1_000)   // the sequence does exercise pairing
        // ≈ 4,000 one-off addresses, ≈ 50 reports in any 0.5 s: the stale are dropped, not kept.
        #expect(filter.last.capacity <= 512, "capacity \(filter.last.capacity)")
    }

    @Test("A crowd within the window is remembered whole; a flood of rotating addresses keeps the table small")
    func crowdAndFlood() {
        var filter = ScanResponseDeduplicator(window: 0.5)
        let data = Sample.iBeaconData
        let start = Timestamp(seconds: 100)
        // 5,000 advertisers within 50 ms: every one's scan response is its repeat.
        for address in UInt64(0)..<5_000 {
            data.withUnsafeBytes { _ = filter.isRepeat(address: address, addressType: 1, isScanResponse: false, data: $0, at: start + Double(address) * 1e-5) }
        }
        var paired = 0
        for address in UInt64(0)..<5_000 {
            let repeated = data.withUnsafeBytes { filter.isRepeat(address: address, addressType: 1, isScanResponse: true, data: $0, at: start + 0.06) }
            if repeated { paired += 1 }
        }
        #expect(paired == 5_000)
        // Then 100,000 one-off addresses 1 ms apart: ≈ 500 within any window.
        for index in UInt64(0)..<100_000 {
            data.withUnsafeBytes {
                _ = filter.isRepeat(address: 0x1_0000 + index, addressType: 1, isScanResponse: false, data: $0, at: start + 1 + Double(index) * 1e-3)
            }
        }
        #expect(filter.last.count <= 2_048, "\(filter.last.count) advertisers remembered")
        #expect(filter.last.capacity <= 4_096, "capacity \(filter.last.capacity)")
        // The last one still pairs; one from the start of the flood (stale) does not.
        let last = data.withUnsafeBytes { filter.isRepeat(address: 0x1_0000 + 99_999, addressType: 1, isScanResponse: true, data: $0, at: start + 101) }
        let early = data.withUnsafeBytes { filter.isRepeat(address: 0x1_0000, addressType: 1, isScanResponse: true, data: $0, at: start + 101) }
        #expect(last && !early)
    }
}
