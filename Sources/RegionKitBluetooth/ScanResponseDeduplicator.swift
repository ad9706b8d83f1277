import RegionKitCore
import RegionKitHCI

/// Tells a new advertising frame from a scan-response report that merely repeats it, so that one
/// frame on the air counts as one sighting.
///
/// Controllers report a scan response (legacy SCAN_RSP, or an extended report with the scan
/// response bit) separately from the advertisement it answers. When its data is the same bytes as
/// the advertisement just reported from the same address, it carries nothing new: Bumble's software
/// controller, for one, reports every frame twice this way, even for passive scanning. Such a
/// report is a *repeat* if it arrives within ``window`` seconds of that advertisement; each
/// advertisement can absorb at most one repeat, so a later copy still counts. Advertisements
/// themselves are never repeats: a beacon sending the same bytes every 100 ms produces a sighting
/// every 100 ms. A scan response with different data (a local name) is a frame of its own.
///
/// ```swift
/// var filter = ScanResponseDeduplicator()
/// filter.isRepeat(advertisement, at: t)          // false: a frame
/// filter.isRepeat(scanResponseCopy, at: t + 0.002) // true: the same frame reported again
/// ```
public struct ScanResponseDeduplicator: Sendable {
    /// How long after an advertisement a scan response with the same data still counts as its
    /// repeat: 0.5 s. A scan response is sent ~150 µs after the SCAN_REQ in the same advertising
    /// event; the rest is host-side delivery latency (USB/UART/TCP, scheduling), which this covers
    /// with room to spare while staying far below the 10.24 s longest advertising interval.
    public static let defaultWindow = 0.5
    /// Remembered advertisers beyond which stale entries are pruned (keeps memory flat in a crowd).
    static let pruneThreshold = 512

    /// What is remembered of an advertiser's last advertisement: its data (up to 32 bytes held
    /// exactly; longer extended data as its first 32 bytes plus a 64-bit FNV-1a hash of the
    /// rest), when, and whether a repeat was already absorbed. Plain words: no allocation.
    private struct Last {
        var words: (UInt64, UInt64, UInt64, UInt64)
        var count: Int
        var tailHash: UInt64
        var time: Timestamp
        var absorbed: Bool

        init(_ data: UnsafeRawBufferPointer, time: Timestamp) {
            var padded: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &padded) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: data.prefix(32))) }
            words = padded
            count = data.count
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in data.dropFirst(32) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            tailHash = hash
            self.time = time
            absorbed = false
        }

        func sameData(as other: Last) -> Bool {
            count == other.count && words == other.words && tailHash == other.tailHash
        }
    }

    public var window: Double
    /// Keyed by address (48 bits) and address type (bits 48–55).
    private var last: [UInt64: Last] = [:]
    /// Prune when the table grows past this (doubles after a prune that kept most entries, so a
    /// crowd of live advertisers costs amortised O(1) per report, not a sweep per report).
    private var pruneWatermark = ScanResponseDeduplicator.pruneThreshold

    public init(window: Double = ScanResponseDeduplicator.defaultWindow) {
        self.window = window.isFinite && window >= 0 ? window : Self.defaultWindow
    }

    /// Records `advertisement` seen at `time`; true when it is a scan response repeating the data
    /// of the advertisement last reported from the same address within ``window``.
    public mutating func isRepeat(_ advertisement: Advertisement, at time: Timestamp) -> Bool {
        let bytes = advertisement.address.bytes
        var address: UInt64 = 0
        for byte in bytes { address = address << 8 | UInt64(byte) }
        return advertisement.data.withUnsafeBytes { data in
            isRepeat(address: address, addressType: advertisement.addressType.rawValue,
                     isScanResponse: advertisement.kind.isScanResponse, data: data, at: time)
        }
    }

    /// ``isRepeat(_:at:)`` on raw report fields (the scanner's allocation-free path).
    /// - Parameter address: the six address bytes, most significant first, as an integer.
    public mutating func isRepeat(address: UInt64, addressType: UInt8, isScanResponse: Bool,
                                  data: UnsafeRawBufferPointer, at time: Timestamp) -> Bool {
        let key = address & 0xFFFF_FFFF_FFFF | UInt64(addressType) << 48
        let current = Last(data, time: time)
        if isScanResponse {
            if let index = last.index(forKey: key) {
                let previous = last.values[index]
                if !previous.absorbed, previous.sameData(as: current), time - previous.time <= window, time >= previous.time {
                    last.values[index].absorbed = true
                    return true
                }
            }
            return false
        }
        last[key] = current
        if last.count > pruneWatermark {
            last = last.filter { time - $0.value.time <= window }
            pruneWatermark = max(Self.pruneThreshold, 2 * last.count)
        }
        return false
    }

    /// Forgets every advertiser (after a reconnect, reports from before are not paired with later ones).
    public mutating func reset() {
        last.removeAll()
        pruneWatermark = Self.pruneThreshold
    }
}
