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

    private struct Key: Hashable {
        var address: BluetoothAddress
        var addressType: LEAddressType
    }

    private struct Last {
        var data: [UInt8]
        var time: Timestamp
        var absorbed: Bool
    }

    public var window: Double
    private var last: [Key: Last] = [:]

    public init(window: Double = ScanResponseDeduplicator.defaultWindow) {
        self.window = window.isFinite && window >= 0 ? window : Self.defaultWindow
    }

    /// Records `advertisement` seen at `time`; true when it is a scan response repeating the data
    /// of the advertisement last reported from the same address within ``window``.
    public mutating func isRepeat(_ advertisement: Advertisement, at time: Timestamp) -> Bool {
        let key = Key(address: advertisement.address, addressType: advertisement.addressType)
        if advertisement.kind.isScanResponse {
            if var previous = last[key], !previous.absorbed, previous.data == advertisement.data,
               time - previous.time <= window, time >= previous.time {
                previous.absorbed = true
                last[key] = previous
                return true
            }
            return false
        }
        last[key] = Last(data: advertisement.data, time: time, absorbed: false)
        if last.count > Self.pruneThreshold {
            last = last.filter { time - $0.value.time <= window }
        }
        return false
    }

    /// Forgets every advertiser (after a reconnect, reports from before are not paired with later ones).
    public mutating func reset() { last.removeAll() }
}
