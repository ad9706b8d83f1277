/// The subevents of the HCI LE Meta event (event code 0x3E) this library decodes.
///
/// ```swift
/// switch try HCIEvent(decoding: bytes) {
/// case .leMeta(.advertisingReport(let reports)): print(reports.count, "legacy")
/// case .leMeta(.extendedAdvertisingReport(let reports)): print(reports.count, "extended")
/// case .leMeta(.unknown(let subevent, _)): print("subevent", subevent)
/// default: break
/// }
/// ```
public enum HCILEMetaEvent: Hashable, Sendable {
    /// Subevent 0x02, LE Advertising Report.
    case advertisingReport([LEAdvertisingReport])
    /// Subevent 0x0D, LE Extended Advertising Report.
    case extendedAdvertisingReport([LEExtendedAdvertisingReport])
    /// Any other subevent, with its parameters after the subevent code.
    case unknown(subevent: UInt8, parameters: [UInt8])

    /// The subevent code.
    public var subevent: UInt8 {
        switch self {
        case .advertisingReport: 0x02
        case .extendedAdvertisingReport: 0x0D
        case .unknown(let subevent, _): subevent
        }
    }
}
