/// Parameters of `HCI_LE_Set_Advertising_Parameters` (Core spec Vol 4 Part E 7.8.5).
///
/// Intervals are in units of 0.625 ms, 0x0020 (20 ms) ... 0x4000 (10.24 s), min ≤ max.
///
/// ```swift
/// // An iBeacon: non-connectable, every 100 ms.
/// let parameters = LEAdvertisingParameters(
///     intervalMin: 160, intervalMax: 160, type: .nonConnectableUndirected)
/// let command = try HCICommand.leSetAdvertisingParameters(parameters)
/// ```
public struct LEAdvertisingParameters: Hashable, Sendable {
    /// Advertising_Type (0x00...0x04).
    public enum AdvertisingType: UInt8, Hashable, Sendable {
        /// ADV_IND: connectable and scannable undirected.
        case connectableUndirected = 0x00
        /// ADV_DIRECT_IND, high duty cycle.
        case connectableDirectedHighDuty = 0x01
        /// ADV_SCAN_IND: scannable undirected.
        case scannableUndirected = 0x02
        /// ADV_NONCONN_IND: non-connectable undirected (beacons).
        case nonConnectableUndirected = 0x03
        /// ADV_DIRECT_IND, low duty cycle.
        case connectableDirectedLowDuty = 0x04
    }

    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var type: AdvertisingType
    public var ownAddressType: LEAddressType
    public var peerAddressType: LEAddressType
    public var peerAddress: BluetoothAddress
    /// Bit 0: channel 37, bit 1: channel 38, bit 2: channel 39. 0x07 = all.
    public var channelMap: UInt8
    /// 0x00 process scan and connection requests from all ... 0x03 from the accept list only.
    public var filterPolicy: UInt8

    public init(
        intervalMin: UInt16 = 0x0800,
        intervalMax: UInt16 = 0x0800,
        type: AdvertisingType = .connectableUndirected,
        ownAddressType: LEAddressType = .public,
        peerAddressType: LEAddressType = .public,
        peerAddress: BluetoothAddress = .zero,
        channelMap: UInt8 = 0x07,
        filterPolicy: UInt8 = 0x00
    ) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.type = type
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    func validate() throws(HCIError) {
        let directedHigh = type == .connectableDirectedHighDuty
        if !directedHigh {
            guard intervalMin >= 0x0020, intervalMin <= 0x4000, intervalMax >= 0x0020, intervalMax <= 0x4000 else {
                throw HCIError(code: .invalidParameter, message: "advertising interval \(hex(intervalMin))...\(hex(intervalMax)) outside 0x0020...0x4000 (units of 0.625 ms)")
            }
            guard intervalMin <= intervalMax else {
                throw HCIError(code: .invalidParameter, message: "advertising interval min \(hex(intervalMin)) exceeds max \(hex(intervalMax))")
            }
        }
        guard ownAddressType.rawValue <= 0x03 else {
            throw HCIError(code: .invalidParameter, message: "own address type \(hex(ownAddressType.rawValue)) outside 0x00...0x03")
        }
        guard peerAddressType.rawValue <= 0x01 else {
            throw HCIError(code: .invalidParameter, message: "peer address type \(hex(peerAddressType.rawValue)) outside 0x00...0x01")
        }
        guard channelMap & 0x07 != 0, channelMap & ~0x07 == 0 else {
            throw HCIError(code: .invalidParameter, message: "channel map \(hex(channelMap)) must enable at least one of channels 37/38/39 (bits 0...2) and nothing else")
        }
        guard filterPolicy <= 0x03 else {
            throw HCIError(code: .invalidParameter, message: "advertising filter policy \(hex(filterPolicy)) outside 0x00...0x03")
        }
    }
}
