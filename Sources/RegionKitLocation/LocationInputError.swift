/// An error from a location input (NMEA, gpsd JSON, GPX, gpsd socket), in the style of
/// swift-nio's `FileSystemError`: a stable ``Code`` to switch on, a human-readable message,
/// and where in the input it happened.
///
/// Parsers never trap on bad input: they return or throw one of these.
///
/// ```swift
/// let result = NMEAReader.read("$GPGGA,123519,4807.038,N*00\n")
/// for error in result.diagnostics {
///     print(error)   // "line 1:25: badChecksum: checksum *00 does not match computed *27"
///     if error.code == .badChecksum { /* count it */ }
/// }
/// ```
public struct LocationInputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, switchable category of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A line that is not `$...*hh` / `!...*hh` NMEA framing (binary junk, truncated line).
        public static let badFraming = Code(rawValue: "badFraming")
        /// The `*hh` checksum does not match the XOR of the sentence body.
        public static let badChecksum = Code(rawValue: "badChecksum")
        /// A well-formed sentence this reader does not decode (reported only when asked for).
        public static let unsupportedSentence = Code(rawValue: "unsupportedSentence")
        /// A sentence has fewer fields than its type requires.
        public static let missingField = Code(rawValue: "missingField")
        /// A field is present but out of range or not parseable (latitude 95°, hour 25, ...).
        public static let badField = Code(rawValue: "badField")
        /// A gpsd JSON line that is not a JSON object with a `class` member.
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// A gpsd JSON object whose `class` this decoder does not know (informational).
        public static let unknownClass = Code(rawValue: "unknownClass")
        /// GPX that is not well-formed XML.
        public static let malformedXML = Code(rawValue: "malformedXML")
        /// A GPX point without a required attribute (`lat`, `lon`) or with an invalid one.
        public static let missingAttribute = Code(rawValue: "missingAttribute")
        /// A socket could not be opened or connected.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// The peer closed the connection.
        public static let connectionClosed = Code(rawValue: "connectionClosed")
        /// A bounded wait ran out.
        public static let timedOut = Code(rawValue: "timedOut")
        /// A caller-supplied argument is invalid (negative speed, port out of range, ...).
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// Events a consumer fell too far behind to receive were dropped (the message counts them).
        public static let droppedEvents = Code(rawValue: "droppedEvents")

        public var description: String { rawValue }
    }

    /// What went wrong, as a stable category.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// 1-based line in the input, when known.
    public var line: Int?
    /// 1-based column (or byte offset within the line), when known.
    public var column: Int?
    /// The offending input, truncated to 120 characters, when useful.
    public var excerpt: String?

    public init(code: Code, message: String, line: Int? = nil, column: Int? = nil, excerpt: String? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        if let excerpt {
            self.excerpt = excerpt.count > 120 ? String(excerpt.prefix(120)) + "…" : excerpt
        } else {
            self.excerpt = nil
        }
    }

    public var description: String {
        var s = ""
        if let line {
            s += "line \(line)"
            if let column { s += ":\(column)" }
            s += ": "
        }
        s += "\(code): \(message)"
        return s
    }
}
