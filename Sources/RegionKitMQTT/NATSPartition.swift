/// The partition NATS's subject mapping `{{partition(N, i)}}` puts a message in, computed here
/// exactly as nats-server does: FNV-1a (32 bits) over the bytes of the wildcard's token, modulo N.
///
/// A RegionKit cluster partitions scanner sightings by beacon identity with a mapping such as
/// `espresense.devices.*.*` → `regionkit.part.{{partition(16,1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}`;
/// an engine that owns partition `p` subscribes to `regionkit/part/<p>/espresense/devices/+/+`, and
/// this function tells it (without asking the broker) which beacons are its own — to restore their
/// state when it takes the partition. Checked against a real nats-server 2.9 cluster by
/// `NATSClusterEndToEndTests`.
///
/// An MQTT topic level becomes one subject token unchanged, except an empty level, which NATS's
/// MQTT listener turns into the token `/`; `.` and spaces are refused in MQTT topics by NATS 2.9.
///
/// ```swift
/// NATSPartition.partition(of: "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1", count: 4)  // 0
/// ```
public enum NATSPartition {
    /// FNV-1a 32-bit hash of `token`'s UTF-8 bytes modulo `count` (0 when `count` ≤ 1).
    public static func partition(of token: String, count: Int) -> Int {
        guard count > 1 else { return 0 }
        var hash: UInt32 = 0x811C_9DC5
        for byte in token.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return Int(hash % UInt32(clamping: count))
    }
}
