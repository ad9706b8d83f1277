/// One received advertisement, whichever report event carried it: the value a
/// scanner hands upwards.
///
/// ```swift
/// for advertisement in event.advertisements {
///     print(advertisement.address)         // "C0:FF:EE:00:00:01"
///     print(advertisement.kind)            // legacy(ADV_NONCONN_IND)
///     print(advertisement.rssi as Any)     // Optional(-50), nil when unavailable
///     print(advertisement.data)            // AD structures
/// }
/// ```
public struct Advertisement: Hashable, Sendable {
    /// What kind of PDU the advertisement came in.
    public enum Kind: Hashable, Sendable, CustomStringConvertible {
        /// From a legacy report: ADV_IND, ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND or SCAN_RSP.
        case legacy(LEAdvertisingReport.EventType)
        /// From an extended report, with its flags (connectable, scannable, directed,
        /// scan response, legacy) and data status.
        case extended(LEExtendedAdvertisingReport.EventType)

        public var isConnectable: Bool {
            switch self {
            case .legacy(let type): type == .advInd || type == .advDirectInd
            case .extended(let flags): flags.contains(.connectable)
            }
        }

        public var isScanResponse: Bool {
            switch self {
            case .legacy(let type): type == .scanRsp
            case .extended(let flags): flags.contains(.scanResponse)
            }
        }

        public var description: String {
            switch self {
            case .legacy(let type): return "legacy(\(type))"
            case .extended(let flags):
                var names: [String] = []
                if flags.contains(.connectable) { names.append("connectable") }
                if flags.contains(.scannable) { names.append("scannable") }
                if flags.contains(.directed) { names.append("directed") }
                if flags.contains(.scanResponse) { names.append("scan response") }
                if flags.contains(.legacy) { names.append("legacy") }
                if flags.dataStatus != 0 { names.append("data status \(flags.dataStatus)") }
                return "extended(\(names.joined(separator: ", ")))"
            }
        }
    }

    /// The advertiser's address; `address.bytes` are most-significant first,
    /// `address.description` is `"AA:BB:CC:DD:EE:FF"`.
    public var address: BluetoothAddress
    public var addressType: LEAddressType
    public var kind: Kind
    /// dBm, nil when the controller reported 127 (not available).
    public var rssi: Int8?
    /// dBm, nil when not reported (legacy reports never carry it; 127 in extended ones).
    public var txPower: Int8?
    /// The advertising data (AD structures).
    public var data: [UInt8]

    public init(address: BluetoothAddress, addressType: LEAddressType, kind: Kind, rssi: Int8?, txPower: Int8?, data: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.kind = kind
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    public init(legacy report: LEAdvertisingReport) {
        self.init(address: report.address, addressType: report.addressType, kind: .legacy(report.eventType),
                  rssi: report.rssi, txPower: nil, data: report.data)
    }

    public init(extended report: LEExtendedAdvertisingReport) {
        self.init(address: report.address, addressType: report.addressType, kind: .extended(report.eventType),
                  rssi: report.rssi, txPower: report.txPower, data: report.data)
    }
}
