/// Incremental splitter of a byte stream into lines (LF or CRLF), with a bound on line length so
/// a peer that never sends a newline cannot exhaust memory.
///
/// ```swift
/// var splitter = LineSplitter(maximumLineLength: 1024)
/// splitter.append(Array("{\"class\":\"TPV\"}\n{\"cla".utf8))
/// splitter.nextLine()   // .line("{\"class\":\"TPV\"}")
/// splitter.nextLine()   // nil — the rest waits for more bytes
/// ```
public struct LineSplitter: Sendable {
    /// What ``nextLine()`` found.
    public enum Item: Hashable, Sendable {
        case line(String)
        /// A line longer than the maximum was discarded (its first bytes are kept for the report).
        case overlong(prefix: String, length: Int)
    }

    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    private var scanFrom = 0
    private var discarding = false
    private var discardedLength = 0
    private var discardedPrefix = ""

    public init(maximumLineLength: Int = 1 << 16) {
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// Bytes held that do not form a complete line yet.
    public var pendingByteCount: Int { buffer.count }

    /// The next complete line, or `nil` when more bytes are needed.
    public mutating func nextLine() -> Item? {
        while true {
            if let nl = buffer[scanFrom...].firstIndex(of: 10) {
                var end = nl
                if end > 0, buffer[end - 1] == 13 { end -= 1 }
                let lineBytes = buffer[0..<end]
                buffer.removeSubrange(0...nl)
                scanFrom = 0
                if discarding {
                    discarding = false
                    let item = Item.overlong(prefix: discardedPrefix, length: discardedLength + lineBytes.count)
                    discardedLength = 0
                    return item
                }
                if lineBytes.count > maximumLineLength {
                    return .overlong(prefix: String(decoding: lineBytes.prefix(80), as: UTF8.self), length: lineBytes.count)
                }
                return .line(String(decoding: lineBytes, as: UTF8.self))
            }
            scanFrom = buffer.count
            if buffer.count > maximumLineLength {
                if !discarding {
                    discarding = true
                    discardedPrefix = String(decoding: buffer.prefix(80), as: UTF8.self)
                }
                discardedLength += buffer.count
                buffer.removeAll(keepingCapacity: true)
                scanFrom = 0
            }
            return nil
        }
    }

    /// Forgets everything buffered (after a reconnect).
    public mutating func reset() {
        buffer.removeAll()
        scanFrom = 0
        discarding = false
        discardedLength = 0
    }
}
