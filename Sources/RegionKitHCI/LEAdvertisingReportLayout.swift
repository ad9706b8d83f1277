/// How several reports are laid out in one legacy LE Advertising Report event.
///
/// See ``LEAdvertisingReport`` for the full discussion. With one report per
/// event (what controllers send) the two layouts are the same bytes.
///
/// ```swift
/// let spec = try HCIEvent(decoding: bytes)                                   // .fieldArrays
/// let bluez = try HCIEvent(decoding: bytes, advertisingReportLayout: .reportByReport)
/// ```
public enum LEAdvertisingReportLayout: Hashable, Sendable {
    /// The Core specification's layout: each field is an array over all reports
    /// (all event types, then all address types, ..., all data, then all RSSI values).
    case fieldArrays
    /// Whole reports one after another, as BlueZ, Zephyr and Bumble read and write them.
    case reportByReport
}
