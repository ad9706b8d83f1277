import RegionKitCore

/// Splits a byte stream of concatenated JSON objects (`{...}{...}`, pretty-printed or one per
/// line) into one byte slice per top-level object, with the offset where each begins. Braces inside
/// strings and escaped quotes are handled. Fed in arbitrary chunks.
///
/// ```swift
/// var splitter = ConcatenatedJSONSplitter()
/// for object in try splitter.feed(Array(#"{"a":1}{"b":"}"}"#.utf8)) { print(object.offset) } // 0, 7
/// try splitter.finish()
/// ```
public struct ConcatenatedJSONSplitter: Sendable {
    public struct Object: Sendable {
        /// Offset of the opening brace in the whole stream.
        public var offset: Int
        public var bytes: [UInt8]
    }

    private var current: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var objectStart = 0
    /// Bytes seen so far.
    public private(set) var offset = 0
    /// Name of the stream in error messages.
    public let source: String

    public init(source: String = "input") {
        self.source = source
    }

    /// Feeds a chunk and returns the objects it completed.
    public mutating func feed(_ chunk: [UInt8]) throws -> [Object] {
        var objects: [Object] = []
        for byte in chunk {
            defer { offset += 1 }
            if depth == 0 {
                switch byte {
                case UInt8(ascii: "{"):
                    depth = 1
                    objectStart = offset
                    current = [byte]
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ","):
                    continue
                default:
                    throw RegionKitError(.malformedInput, "\(source): unexpected byte 0x\(String(byte, radix: 16)) ('\(Self.printable(byte))') at offset \(offset) between JSON objects")
                }
                continue
            }
            current.append(byte)
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    objects.append(Object(offset: objectStart, bytes: current))
                    current = []
                }
            default: break
            }
        }
        return objects
    }

    /// Checks that the stream did not end inside an object.
    public func finish() throws {
        if depth > 0 {
            throw RegionKitError(.malformedInput, "\(source): truncated: the JSON object starting at offset \(objectStart) is not closed at the end of the data (offset \(offset))")
        }
    }

    static func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "?"
    }
}
