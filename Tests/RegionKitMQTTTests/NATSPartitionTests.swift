import Testing
@testable import RegionKitMQTT

/// NATSPartition against values worked out by hand from FNV-1a (offset basis 0x811C9DC5, prime
/// 0x01000193) and observed from nats-server 2.9 with `{{partition(4,1)}}` (NATSClusterEndToEndTests
/// checks 30 more beacons against a live cluster).
@Suite("NATS partition of a subject token")
struct NATSPartitionTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    @Test("ESPresense ids of minors 1…8 fall in partitions 0,1,2,3,0,1,2,3 of 4 (as nats-server 2.9 routed them)")
    func espresenseIdentities() {
        let partitions = (1...8).map { NATSPartition.partition(of: "iBeacon:\(Self.uuid)-1-\($0)", count: 4) }
        #expect(partitions == [0, 1, 2, 3, 0, 1, 2, 3])
    }

    @Test("edge tokens: empty (the hash is the offset basis 0x811C9DC5), '/' (NATS's token for an empty MQTT level), one count")
    func edges() {
        #expect(NATSPartition.partition(of: "", count: 4) == Int(0x811C_9DC5 % 4))   // 1
        #expect(NATSPartition.partition(of: "", count: 1_000) == Int(0x811C_9DC5 % 1_000))
        // "/" = 0x2F: (0x811C9DC5 ^ 0x2F) * 0x01000193 mod 2^32 = 0x2A0C975E → mod 4 = 2 (observed: part/2 for espresense/devices//kitchen).
        #expect(NATSPartition.partition(of: "/", count: 4) == 2)
        #expect(NATSPartition.partition(of: "a*b", count: 4) == 0, "observed: part/0")
        #expect(NATSPartition.partition(of: "anything", count: 1) == 0)
        #expect(NATSPartition.partition(of: "anything", count: 0) == 0)
        #expect(NATSPartition.partition(of: "anything", count: -3) == 0)
    }
}
