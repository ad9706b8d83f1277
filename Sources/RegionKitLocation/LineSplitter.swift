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
    /// The first byte not taken as a line yet: lines are read in place, and what they used is
    /// dropped once per ``append(_:)``. (Dropped line by line, the rest of the buffer moved for
    /// every line: a flood of empty lines from a peer was read at 0.55 MB/s.)
    private var start = 0
    /// Where the search for the next newline goes on (the bytes before it hold none).
    private var scanFrom = 0
    private var discarding = false
    private var discardedLength = 0
    private var discardedPrefix = ""

    public init(maximumLineLength: Int = 1 << 16) {
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanFrom -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes held that do not form a complete line yet.
    public var pendingByteCount: Int { buffer.count - start }

    /// The next complete line, or `nil` when more bytes are needed.
    public mutating func nextLine() -> Item? {
        if let nl = buffer[scanFrom...].firstIndex(of: 10) {
            var end = nl
            if end > start, buffer[end - 1] == 13 { end -= 1 }
            let lineBytes = buffer[start..<end]
            start = nl + 1
            scanFrom = start
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
        if buffer.count - start > maximumLineLength {
            if !discarding {
                discarding = true
                discardedPrefix = String(decoding: buffer[start...].prefix(80), as: UTF8.self)
            }
            discardedLength += buffer.count - start
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanFrom = 0
        }
        return nil
    }

    /// Forgets everything buffered (after a reconnect).
    public mutating func reset() {
        buffer.removeAll()
        start = 0
        scanFrom = 0
        discarding = false
        discardedLength = 0
    }
}
