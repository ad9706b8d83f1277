/// Why one MQTT sighting message was rejected: a kind (for counting and rate-limited logging) and
/// a message naming the field.
///
/// ```swift
/// do { _ = try decoder.decode(topic: topic, payload: payload, receivedAt: now) }
/// catch { counts[error.kind, default: 0] += 1 }   // error.kind == .wrongType, error.message == "field 'rssi' is not a number"
/// ```
public struct SightingMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of damage; open like GRDB's result codes.
    public struct Kind: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Larger than the format's size limit.
        public static let tooLarge = Kind(rawValue: "tooLarge")
        /// Not UTF-8.
        public static let invalidUTF8 = Kind(rawValue: "invalidUTF8")
        /// Not a JSON object (truncated, wrong syntax, an array, a bare value).
        public static let invalidJSON = Kind(rawValue: "invalidJSON")
        /// A required field is absent.
        public static let missingField = Kind(rawValue: "missingField")
        /// A field has the wrong JSON type.
        public static let wrongType = Kind(rawValue: "wrongType")
        /// A number outside its range (RSSI, major, minor, measured power, times).
        public static let outOfRange = Kind(rawValue: "outOfRange")
        /// A field that should hold an identifier, hex data or a UUID does not parse.
        public static let malformedField = Kind(rawValue: "malformedField")
        /// The topic does not have the format's shape.
        public static let badTopic = Kind(rawValue: "badTopic")
        /// A scanner's status that is neither `online` nor `offline` (``ScannerStatusMessage``).
        public static let badStatus = Kind(rawValue: "badStatus")

        public var description: String { rawValue }
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind): \(message)" }
}
