/// Parameters of `HCI_LE_Set_Scan_Parameters` (Core spec Vol 4 Part E 7.8.10), also
/// used for the LE 1M PHY entry of `HCI_LE_Set_Extended_Scan_Parameters` (7.8.64).
///
/// Interval and window are in units of 0.625 ms: 0x0004 (2.5 ms) ... 0x4000 (10.24 s)
/// for legacy scanning, up to 0xFFFF (40.96 s) for extended scanning; window ≤ interval.
///
/// ```swift
/// let parameters = LEScanParameters(
///     scanType: .passive,
///     interval: LEScanParameters.units(milliseconds: 100), // 160
///     window: LEScanParameters.units(milliseconds: 100))
/// let command = try HCICommand.leSetScanParameters(parameters)
/// ```
public struct LEScanParameters: Hashable, Sendable {
    /// Passive scanning only listens; active scanning also sends SCAN_REQ.
    public enum ScanType: UInt8, Hashable, Sendable {
        case passive = 0x00
        case active = 0x01
    }

    /// Scanning filter policy (0x00...0x03).
    public struct FilterPolicy: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Accept all advertisements except directed ones not addressed to us.
        public static let acceptAll = FilterPolicy(rawValue: 0x00)
        /// Accept only advertisers in the Filter Accept List.
        public static let acceptListOnly = FilterPolicy(rawValue: 0x01)
        /// Like ``acceptAll`` but also directed advertisements with a resolvable target.
        public static let acceptAllIncludingUnresolvedDirected = FilterPolicy(rawValue: 0x02)
        /// Like ``acceptListOnly`` but also directed advertisements with a resolvable target.
        public static let acceptListIncludingUnresolvedDirected = FilterPolicy(rawValue: 0x03)
    }

    public var scanType: ScanType
    /// Scan interval in 0.625 ms units.
    public var interval: UInt16
    /// Scan window in 0.625 ms units (≤ interval).
    public var window: UInt16
    public var ownAddressType: LEAddressType
    public var filterPolicy: FilterPolicy

    public init(
        scanType: ScanType = .passive,
        interval: UInt16 = 0x0010,
        window: UInt16 = 0x0010,
        ownAddressType: LEAddressType = .public,
        filterPolicy: FilterPolicy = .acceptAll
    ) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    /// Converts milliseconds to 0.625 ms units, rounded to nearest and clamped to UInt16.
    public static func units(milliseconds: Double) -> UInt16 {
        let units = (milliseconds / 0.625).rounded()
        if !(units >= 0) { return 0 }
        return units >= Double(UInt16.max) ? UInt16.max : UInt16(units)
    }

    /// Checks the ranges the spec allows; `maximumInterval` is 0x4000 for legacy, 0xFFFF for extended.
    func validate(maximumInterval: UInt16) throws(HCIError) {
        guard interval >= 0x0004, interval <= maximumInterval else {
            throw HCIError(code: .invalidParameter, message: "scan interval \(hex(interval)) outside 0x0004...\(hex(maximumInterval)) (units of 0.625 ms)")
        }
        guard window >= 0x0004, window <= interval else {
            throw HCIError(code: .invalidParameter, message: "scan window \(hex(window)) must be 0x0004... and not exceed the interval \(hex(interval))")
        }
        guard ownAddressType.rawValue <= 0x03 else {
            throw HCIError(code: .invalidParameter, message: "own address type \(hex(ownAddressType.rawValue)) outside 0x00...0x03")
        }
        guard filterPolicy.rawValue <= 0x03 else {
            throw HCIError(code: .invalidParameter, message: "scanning filter policy \(hex(filterPolicy.rawValue)) outside 0x00...0x03")
        }
    }
}
