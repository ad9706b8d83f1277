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
}
