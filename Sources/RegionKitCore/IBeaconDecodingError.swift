/// Why a byte string is not an iBeacon advertisement, and where.
///
/// ```swift
/// do { _ = try IBeaconFrame.decode(bytes) }
/// catch { print(error.code, error.offset, error.message) }
/// ```
public struct IBeaconDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the bytes are not an iBeacon: an open set, compare against the static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An AD structure's length runs past the end of the data.
        public static let truncatedStructure = Code(rawValue: "truncatedStructure")
        /// No Manufacturer Specific Data AD structure at all.
        public static let noManufacturerData = Code(rawValue: "noManufacturerData")
        /// Manufacturer data from another company.
        public static let wrongCompany = Code(rawValue: "wrongCompany")
        /// Apple manufacturer data of another type (e.g. not 0x02).
        public static let wrongType = Code(rawValue: "wrongType")
        /// iBeacon type but the wrong payload length.
        public static let wrongLength = Code(rawValue: "wrongLength")

        public var description: String { rawValue }
    }

    public var code: Code
    /// Byte offset in the advertising data where the problem was found.
    public var offset: Int
    public var message: String

    public init(_ code: Code, at offset: Int, _ message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { message }

    /// The same failure as a ``RegionKitError`` (code `malformedFrame`).
    public var regionKitError: RegionKitError { RegionKitError(.malformedFrame, message) }
}
