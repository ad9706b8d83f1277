import Logging

/// A log handler that passes every record on to another one (the daemon's stderr lines) with the
/// control characters of its message and metadata escaped: text that comes from the network — a
/// topic, a scanner's name, a field of a payload quoted in an error — cannot start a line of its
/// own. A status topic with `%0A` in its scanner level, and an ESPresense id with a `\n`, each
/// printed a whole forged line (`… critical regionkit: FORGED`). Newline, carriage return, tab
/// and backslash become `\n`, `\r`, `\t`, `\\` (so a `\n` sent as two characters reads
/// `\\n`, unlike a newline); any other control character (C0, DEL, C1), the line and
/// paragraph separators (U+2028, U+2029) and the bidirectional overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069: text that reads differently from what it is) become `\u{…}`.
///
/// ```swift
/// var logger = Logger(label: "regionkit") { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
/// logger.warning("rejected", metadata: ["scanner": "x\nforged"])   // … scanner=x\nforged rejected
/// ```
struct EscapingLogHandler: LogHandler {
    private var inner: any LogHandler

    init(_ inner: any LogHandler) {
        self.inner = inner
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = Self.escaped(newValue) }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue.map { provider in Logger.MetadataProvider { Self.escaped(provider.get()) } } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: Self.escaped(key)] = newValue.map(Self.escaped) }
    }

    func log(event: LogEvent) {
        var event = event
        let message = event.message.description
        let escaped = Self.escaped(message)
        if escaped != message { event.message = "\(escaped)" }
        event.metadata = event.metadata.map(Self.escaped)
        // An error's text goes in the metadata as the stream handler writes it, escaped.
        if let error = event.error {
            var metadata = event.metadata ?? [:]
            metadata["error.message"] = .string(Self.escaped("\(error)"))
            metadata["error.type"] = .string(String(reflecting: type(of: error)))
            event.metadata = metadata
            event.error = nil
        }
        inner.log(event: event)
    }

    /// `text` with the characters the type's documentation names escaped (unchanged, not copied,
    /// when it holds none: printable ASCII without a backslash).
    static func escaped(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.properties.generalCategory == .control || (0x2028...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value):
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out: Logger.Metadata = [:]
        for (key, value) in metadata { out[escaped(key)] = escaped(value) }
        return out
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(escaped(text))
        case .stringConvertible(let convertible): .string(escaped(convertible.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let metadata): .dictionary(escaped(metadata))
        }
    }
}
