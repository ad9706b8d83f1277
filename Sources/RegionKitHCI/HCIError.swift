/// An error raised by the HCI layer: a malformed packet or file, an invalid
/// parameter, or a transport failure.
///
/// Modelled on swift-nio's `FileSystemError`: a small, extensible ``Code``,
/// a human-readable ``message``, the byte ``offset`` where decoding failed
/// (when the error is about bytes), and an optional underlying ``cause``.
///
/// ```swift
/// do {
///     _ = try HCIEvent(decoding: [0x0E, 0x05, 0x01])
/// } catch {
///     print(error.code)    // lengthMismatch
///     print(error.offset)  // Optional(1)
///     print(error)         // "lengthMismatch at byte 1: ..."
/// }
/// ```
public struct HCIError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is: an open set, compare against the static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The input ended before a complete header, field or packet.
        public static let truncated = Code(rawValue: "truncated")
        /// A declared length does not match the bytes present.
        public static let lengthMismatch = Code(rawValue: "lengthMismatch")
        /// A declared item count needs more bytes than there are.
        public static let countOverrun = Code(rawValue: "countOverrun")
        /// A declared data length runs past the end of its container.
        public static let dataLengthOverrun = Code(rawValue: "dataLengthOverrun")
        /// An H4 packet type byte that is not 0x01...0x05.
        public static let unknownPacketType = Code(rawValue: "unknownPacketType")
        /// A field holds a value the specification does not allow.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A command builder was given a parameter out of its allowed range.
        public static let invalidParameter = Code(rawValue: "invalidParameter")
        /// A capture file is not a btsnoop file or is garbled.
        public static let malformedFile = Code(rawValue: "malformedFile")
        /// Valid input this implementation does not handle.
        public static let unsupported = Code(rawValue: "unsupported")
        /// A transport specification string (`hci0`, `tcp:…`, `serial:…`) is invalid.
        public static let invalidTransportSpecification = Code(rawValue: "invalidTransportSpecification")
        /// The kernel has no AF_BLUETOOTH socket family.
        public static let noBluetoothSupport = Code(rawValue: "noBluetoothSupport")
        /// The requested HCI adapter (`hciN`) does not exist.
        public static let noSuchAdapter = Code(rawValue: "noSuchAdapter")
        /// The process lacks a needed privilege (CAP_NET_RAW, device permissions).
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// A connection could not be established.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// An operation did not finish within its time limit.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The peer closed the connection, or the device went away.
        public static let connectionClosed = Code(rawValue: "connectionClosed")
        /// A read or write on the transport failed.
        public static let io = Code(rawValue: "io")
        /// The transport was used after ``HCITransport/close()``.
        public static let closed = Code(rawValue: "closed")

        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence saying what went wrong, naming the offending field or value.
    public var message: String
    /// Byte offset into the decoded input (packet, stream or file) where the problem was found.
    public var offset: Int?
    /// Index of the record (btsnoop) or report the problem belongs to, if any.
    public var index: Int?
    /// The underlying error, such as a ``SystemCallError``.
    public var cause: (any Error)?

    public init(code: Code, message: String, offset: Int? = nil, index: Int? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
        self.index = index
        self.cause = cause
    }

    public var description: String {
        var text = "\(code)"
        if let index { text += " in record \(index)" }
        if let offset { text += " at byte \(offset)" }
        text += ": \(message)"
        if let cause { text += " (cause: \(cause))" }
        return text
    }
}
