extension ScannerBatch {
    /// The topics' common prefix.
    public static let topicPrefix = "regionkit/scanners"

    /// The topic a scanner publishes its batches on: `regionkit/scanners/<level>`, the level its
    /// name's ``topicLevel(scanner:)``.
    ///
    /// ```swift
    /// ScannerBatch.topic(scanner: "Living Room")   // "regionkit/scanners/Living%20Room"
    /// ```
    public static func topic(scanner: String, prefix: String = topicPrefix) -> String { "\(prefix)/\(topicLevel(scanner: scanner))" }

    /// The retained topic a scanner says it is `online` or `offline` on (``ScannerStatusMessage``):
    /// `regionkit/scanners/<level>/status`, beside its batches. Its level is read back with
    /// ``scanner(topicLevel:)``, so the hub knows the scanner by the name its batches carry.
    ///
    /// ```swift
    /// ScannerBatch.statusTopic(scanner: "garage")   // "regionkit/scanners/garage/status"
    /// ```
    public static func statusTopic(scanner: String, prefix: String = topicPrefix) -> String { "\(topic(scanner: scanner, prefix: prefix))/status" }

    /// A scanner's name as one topic level, one-to-one and readable back (``scanner(topicLevel:)``):
    /// ASCII letters, digits, `_` and `-` kept; every other UTF-8 byte as `%` and two upper-case hex
    /// digits (`Living Room` → `Living%20Room`, `Küche` → `K%C3%BCche`). Nothing a topic level
    /// cannot hold (`/`, `+`, `#`, NUL) or NATS's MQTT listener refuses (space, `.`) is left.
    /// An empty name is the empty level.
    ///
    /// ```swift
    /// ScannerBatch.topicLevel(scanner: "kitchen")   // "kitchen"
    /// ```
    public static func topicLevel(scanner: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(scanner.utf8.count)
        for byte in scanner.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "-"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The scanner name a topic level stands for (``topicLevel(scanner:)`` undone), or nil when a
    /// `%` is not followed by two hex digits or the bytes are not UTF-8. Lenient: hex digits of
    /// either case, and characters left unencoded (a status published by hand on
    /// `regionkit/scanners/Küche/status`) read as themselves.
    ///
    /// ```swift
    /// ScannerBatch.scanner(topicLevel: "Living%20Room")   // "Living Room"
    /// ```
    public static func scanner(topicLevel: some StringProtocol) -> String? {
        let utf8 = Array(topicLevel.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            guard utf8[index] == UInt8(ascii: "%") else {
                bytes.append(utf8[index])
                index += 1
                continue
            }
            guard index + 2 < utf8.count, let high = TheengsMessage.hexValue(utf8[index + 1]),
                  let low = TheengsMessage.hexValue(utf8[index + 2]) else { return nil }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
