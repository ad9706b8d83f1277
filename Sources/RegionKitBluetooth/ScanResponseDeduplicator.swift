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
    /// The window in seconds; a value that is not a finite, non-negative number (NaN, negative,
    /// infinite: an unbounded window would keep every advertiser of a rotating-address crowd)
    /// is replaced by ``defaultWindow``, when set as when given to the initializer.
    public var window: Double {
        didSet { if !(window.isFinite && window >= 0) { window = Self.defaultWindow } }
    }
    /// Each advertiser's last advertisement, keyed by address (48 bits) and address type (bits
    /// 48–55); stale advertisers are dropped when the table fills, so a crowd of rotating
    /// addresses keeps memory flat.
    private(set) var last = AdvertiserTable()

    public init(window: Double = ScanResponseDeduplicator.defaultWindow) {
        self.window = window.isFinite && window >= 0 ? window : Self.defaultWindow
    }

    /// A filter whose table hashes with `tableSeed` instead of a random seed (tests replaying a sequence).
    init(window: Double, tableSeed: UInt64) {
        self.init(window: window)
        last = AdvertiserTable(seed: tableSeed)
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
        let current = AdvertiserTable.Entry(data, time: time)
        if isScanResponse {
            if let index = last.position(of: key) {
                let previous = last.entries[index]
                if !previous.absorbed, previous.sameData(as: current), time - previous.time <= window, time >= previous.time {
                    last.markAbsorbed(at: index)
                    return true
                }
            }
            return false
        }
        last.store(key: key, current, window: window)
        return false
    }

    /// Forgets every advertiser (after a reconnect, reports from before are not paired with later ones).
    public mutating func reset() {
        last.removeAll()
    }
}
