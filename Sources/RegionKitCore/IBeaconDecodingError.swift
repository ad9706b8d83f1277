/// Why a byte string is not an iBeacon advertisement, and where.
///
/// ```swift
/// do { _ = try IBeaconFrame.decode(bytes) }
/// catch { print(error.reason, error.offset, error.message) }
/// ```
public struct IBeaconDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: String, Hashable, Sendable {
        /// An AD structure's length runs past the end of the data.
        case truncatedStructure
        /// No Manufacturer Specific Data AD structure at all.
        case noManufacturerData
        /// Manufacturer data from another company.
        case wrongCompany
        /// Apple manufacturer data of another type (e.g. not 0x02).
        case wrongType
        /// iBeacon type but the wrong payload length.
        case wrongLength
    }

    public var reason: Reason
    /// Byte offset in the advertising data where the problem was found.
    public var offset: Int
    public var message: String

    public init(_ reason: Reason, at offset: Int, _ message: String) {
        self.reason = reason
        self.offset = offset
        self.message = message
    }

    public var description: String { message }

    /// The same failure as a ``RegionKitError`` (code `malformedFrame`).
    public var regionKitError: RegionKitError { RegionKitError(.malformedFrame, message) }
}
