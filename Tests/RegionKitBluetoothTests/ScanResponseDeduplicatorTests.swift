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
        #expect(ScanResponseDeduplicator(window: .infinity).window == ScanResponseDeduplicator.defaultWindow)
        // Set later, the same: an infinite window would keep every advertiser ever heard.
        var filter = ScanResponseDeduplicator(window: 0.25)
        for bad in [Double.nan, -0.5, .infinity, -.infinity] {
            filter.window = 0.25
            filter.window = bad
            #expect(filter.window == ScanResponseDeduplicator.defaultWindow, "\(bad)")
        }
        filter.window = 0
        #expect(filter.window == 0)
        filter.window = 2
        #expect(filter.window == 2)
        // A flood of one-off addresses after `window = .infinity` keeps the table small.
        filter.window = .infinity
        let data = Sample.iBeaconData
        for index in UInt64(0)..<20_000 {
            data.withUnsafeBytes {
                _ = filter.isRepeat(address: index, addressType: 1, isScanResponse: false, data: $0, at: Timestamp(seconds: Double(index) * 1e-3))
            }
        }
        #expect(filter.last.count <= 2_048, "\(filter.last.count) advertisers remembered")
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

    @Test("Against a model that forgets nothing: a pool of beacons, floods of one-off addresses, long data differing after byte 32, resets",
          arguments: [UInt64(1), 2, 3])
    func againstModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var filter = ScanResponseDeduplicator(window: 0.5, tableSeed: seed)
        var model = Model(window: 0.5)
        let long = Array(repeating: UInt8(0x42), count: 40)
        var tailChanged = long
        tailChanged[39] = 0x43   // same first 32 bytes: only the tail hash tells them apart
        let payloads: [[UInt8]] = [Sample.iBeaconData, [0x05, 0x09, 0x64, 0x65, 0x73, 0x6B], long, tailChanged, []]
        var time = 100.0, fresh: UInt64 = 0x10_0000, repeats = 0, largest = 0
        var recent: [(address: UInt64, addressType: UInt8, data: [UInt8])] = []
        for step in 0..<40_000 {
            // Quiet stretches (0–20 ms apart; the pool, pairs and some one-off addresses) and
            // floods (0–0.2 ms apart; pairs and one-off addresses), in turns of 3,000 reports,
            // then 10,000 quiet ones from the pool alone: the table grows past a few hundred
            // buckets and shrinks back.
            let flood = step < 30_000 && step / 3_000 % 2 == 1
            if random.next() % 8 != 0 { time += random.uniform() * (flood ? 0.000_2 : 0.02) }
            if step < 30_000, step % 7_919 == 7_918 {
                filter.reset()
                model.last.removeAll()
            }
            var address: UInt64, addressType = UInt8(random.next() % 2), scanResponse = random.next() % 5 < 2
            var data = payloads[Int(random.next() % UInt64(payloads.count))]
            switch random.next() % 10 {
            case 0..<3 where !recent.isEmpty:
                // The scan response to one of the last 50 reports (a pair, when that was an
                // advertisement still within the window).
                (address, addressType, data) = recent[Int(random.next() % UInt64(recent.count))]
                scanResponse = true
            case 0..<6 where !flood, _ where step >= 30_000:
                // The pool; only the pool at the end, whose beacons overwrite their own entries
                // (no new advertiser makes the table fill and rebuild).
                address = 0xC0FF_EE00_0000 + random.next() % 20
            default:
                // One-off addresses, consecutive (a fleet's public addresses) or scattered.
                fresh += random.next() % 4 == 0 ? random.next() % 1_000_000 : 1
                address = fresh & 0xFFFF_FFFF_FFFF
            }
            recent.append((address, addressType, data))
            if recent.count > 50 { recent.removeFirst() }
            let answer = data.withUnsafeBytes {
                filter.isRepeat(address: address, addressType: addressType, isScanResponse: scanResponse, data: $0, at: Timestamp(seconds: time))
            }
            let expected = model.isRepeat(key: address | UInt64(addressType) << 48, scanResponse: scanResponse, data: data, time: time)
            #expect(answer == expected, "step \(step): address \(address), type \(addressType), scan response \(scanResponse), \(data.count) bytes")
            if answer != expected { return }
            if answer { repeats += 1 }
            largest = max(largest, filter.last.capacity)
        }
        #expect(repeats > 1_000)   // the sequence does exercise pairing
        #expect(largest >= 512, "largest table \(largest) buckets")   // the floods grew it
        // ≈ 50 reports in any 0.5 s of the last quiet stretch: the floods' stale advertisers are
        // dropped and the table has shrunk.
        #expect(filter.last.capacity <= 512, "capacity \(filter.last.capacity)")
    }

    @Test("The table itself: every advertiser stored within the window is found with its latest entry; load and count stay consistent",
          arguments: [UInt64(1), 2, 3])
    func tableInvariants(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = AdvertiserTable(seed: seed)
        var model: [UInt64: Double] = [:]   // key → time of its latest entry
        let window = 0.5
        var time = 0.0
        var base: UInt64 = 0x00_1A7D_0000_0000
        for step in 0..<20_000 {
            time += random.uniform() * (step / 2_000 % 2 == 0 ? 0.01 : 0.000_1)
            // Runs of consecutive addresses (one vendor's batch) and scattered ones, both types.
            let key: UInt64
            switch random.next() % 3 {
            case 0: key = (base + random.next() % 64) | UInt64(random.next() % 2) << 48
            case 1: base += 1; key = base
            default: key = random.next() & 0x00FF_FFFF_FFFF_FFFF   // 56 bits, as the filter's keys
            }
            let entry = [UInt8(truncatingIfNeeded: step)].withUnsafeBytes { AdvertiserTable.Entry($0, time: Timestamp(seconds: time)) }
            table.store(key: key, entry, window: window)
            model[key] = time
            #expect(table.count * 4 <= table.capacity * 3)
            guard let found = table.position(of: key) else {
                Issue.record("step \(step): the key just stored is not found")
                return
            }
            #expect(table.entries[found].time.seconds == time)
            if step % 500 == 499 {
                // The count is the buckets in use; every advertiser heard within the window is
                // there, with its latest entry.
                #expect(table.count == table.keys.filter { $0 != AdvertiserTable.empty }.count)
                for (stored, at) in model where time - at <= window {
                    let position = table.position(of: stored)
                    #expect(position.map { table.entries[$0].time.seconds } == at, "step \(step): key \(stored)")
                }
                model = model.filter { time - $0.value <= window }
            }
        }
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
        // The advertisers from the start of the flood and the crowd are gone from the table (not
        // merely stale); the last one is there and still pairs.
        #expect(filter.last.position(of: 0x1_0000 | 1 << 48) == nil)
        #expect(filter.last.position(of: 0 | 1 << 48) == nil)
        let last = data.withUnsafeBytes { filter.isRepeat(address: 0x1_0000 + 99_999, addressType: 1, isScanResponse: true, data: $0, at: start + 101) }
        #expect(last)
    }
}
