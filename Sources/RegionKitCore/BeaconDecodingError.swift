/// Why a byte string is not an iBeacon, AltBeacon, Eddystone or beacon-layout frame, and where:
/// the one error of every beacon decoder (``IBeaconFrame/decode(_:)``, ``AltBeaconFrame/decode(_:)``,
/// ``EddystoneFrame/decode(_:)``, ``BeaconFrame/decode(_:)``, ``BeaconLayout/decode(_:)``).
///
/// ```swift
/// do { _ = try AltBeaconFrame.decode(bytes) }
/// catch { print(error.code, error.offset, error.message) } // wrongBeaconCode 7 "beacon code 0x0215 at offset 7 is not AltBeacon's 0xBEAC"
/// ```
public struct BeaconDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the bytes are not the frame: an open set, compare against the static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An AD structure's length runs past the end of the data, or a structure is too short for its fields.
        public static let truncatedStructure = Code(rawValue: "truncatedStructure")
        /// No AD structure of the kind the format uses (Manufacturer Specific Data, Service Data).
        public static let noBeaconData = Code(rawValue: "noBeaconData")
        /// iBeacon: manufacturer data from another company than Apple (0x004C).
        public static let wrongCompany = Code(rawValue: "wrongCompany")
        /// iBeacon: Apple manufacturer data of another type than 0x02.
        public static let wrongType = Code(rawValue: "wrongType")
        /// AltBeacon: the two bytes after the company identifier are not the beacon code 0xBEAC.
        public static let wrongBeaconCode = Code(rawValue: "wrongBeaconCode")
        /// Service data of another 16-bit service UUID (Eddystone is 0xFEAA).
        public static let wrongServiceUUID = Code(rawValue: "wrongServiceUUID")
        /// Eddystone frame type not the one asked for (or unknown).
        public static let wrongFrameType = Code(rawValue: "wrongFrameType")
        /// The structure has the matcher but not the format's exact length (iBeacon: also a payload
        /// length byte other than 0x15).
        public static let wrongLength = Code(rawValue: "wrongLength")
        /// A reserved value where the format defines its values (URL scheme or code, TLM version, RFU bytes).
        public static let reservedValue = Code(rawValue: "reservedValue")
        /// A beacon layout's matcher bytes differ.
        public static let matcherMismatch = Code(rawValue: "matcherMismatch")

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
