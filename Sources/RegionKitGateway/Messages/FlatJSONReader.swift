/// A strict, allocation-light reader of one JSON object, for the scanner messages that arrive tens
/// of thousands of times a second: it validates the whole payload against JSON's grammar (RFC 8259)
/// but materialises only the top-level members asked for; nested objects and arrays are checked
/// and skipped (to a depth of ``maximumDepth``). Errors give the byte offset and what was expected.
///
/// ```swift
/// let fields = try FlatJSONReader.fields(of: Array(#"{"id":"iBeacon:…","rssi":-71.5,"x":[1,{}]}"#.utf8), keys: ["id", "rssi"])
/// fields[1]   // .number(-71.5)
/// ```
enum FlatJSONReader {
    static let maximumDepth = 32

    /// Member names to read, as bytes once (a format keeps its set in a static).
    struct Keys: Sendable {
        let bytes: [[UInt8]]
        init(_ keys: [String]) { bytes = keys.map { Array($0.utf8) } }
    }

    /// The requested members' values (nil where absent; the last one wins when a key repeats).
    /// The payload must be valid UTF-8 (checked by the caller).
    static func fields(of payload: [UInt8], keys: [String]) throws(SightingMessageError) -> [JSONScalar?] {
        try fields(of: payload, keys: Keys(keys))
    }

    /// `firstWins`: a repeated key keeps its first value (as Foundation's `JSONDecoder` does).
    static func fields(of payload: [UInt8], keys: Keys, firstWins: Bool = false) throws(SightingMessageError) -> [JSONScalar?] {
        let wanted = keys.bytes
        var values = [JSONScalar?](repeating: nil, count: wanted.count)
        let result: Result<Void, SightingMessageError> = payload.withUnsafeBufferPointer { buffer in
            var reader = Cursor(bytes: buffer)
            reader.firstWins = firstWins
            do throws(SightingMessageError) {
                try reader.readObject(wanted: wanted, into: &values)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        return values
    }

    struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// A repeated wanted key keeps its first value.
        var firstWins = false

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func fail(_ what: String) -> SightingMessageError {
            SightingMessageError(.invalidJSON, index >= bytes.count ? "invalid JSON: truncated (expected \(what) at byte \(index))"
                                                                    : "invalid JSON: expected \(what) at byte \(index)")
        }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func expect(_ byte: UInt8, _ what: String) throws(SightingMessageError) {
            guard peek == byte else { throw fail(what) }
            index += 1
        }

        /// The top-level object, then nothing but whitespace.
        mutating func readObject(wanted: [[UInt8]], into values: inout [JSONScalar?]) throws(SightingMessageError) {
            skipWhitespace()
            guard peek == UInt8(ascii: "{") else {
                throw index >= bytes.count ? fail("a JSON object") : SightingMessageError(.invalidJSON, "payload is not a JSON object")
            }
            index += 1
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    let key = try readString()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"), "':'")
                    skipWhitespace()
                    if let slot = slot(of: key, in: wanted) {
                        let value = try readValue()
                        if !firstWins || values[slot] == nil { values[slot] = value }
                    } else {
                        try skipValue(depth: 1)
                    }
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "}"), "',' or '}'")
                    break
                }
            }
            skipWhitespace()
            guard index == bytes.count else { throw SightingMessageError(.invalidJSON, "invalid JSON: trailing data at byte \(index)") }
        }

        /// A decoded string or, without escapes, its byte range.
        enum StringValue {
            case range(Range<Int>)
            case decoded([UInt8])
        }

        func slot(of key: StringValue, in wanted: [[UInt8]]) -> Int? {
            switch key {
            case .range(let range):
                return wanted.firstIndex { candidate in
                    candidate.count == range.count && candidate.withUnsafeBufferPointer { c in
                        var i = 0
                        while i < c.count, c[i] == bytes[range.lowerBound + i] { i += 1 }
                        return i == c.count
                    }
                }
            case .decoded(let decoded):
                return wanted.firstIndex(of: decoded)
            }
        }

        mutating func readString() throws(SightingMessageError) -> StringValue {
            try expect(UInt8(ascii: "\""), "a string")
            let start = index
            var decoded: [UInt8]?
            while true {
                guard let byte = peek else { throw fail("'\"'") }
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return decoded.map(StringValue.decoded) ?? .range(start..<(index - 1))
                }
                if byte < 0x20 { throw fail("no control character in a string") }
                if byte == UInt8(ascii: "\\") {
                    if decoded == nil { decoded = Array(bytes[start..<index]) }
                    index += 1
                    guard let escape = peek else { throw fail("an escape") }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded!.append(escape)
                    case UInt8(ascii: "b"): decoded!.append(0x08)
                    case UInt8(ascii: "f"): decoded!.append(0x0C)
                    case UInt8(ascii: "n"): decoded!.append(0x0A)
                    case UInt8(ascii: "r"): decoded!.append(0x0D)
                    case UInt8(ascii: "t"): decoded!.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try readHex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else { throw fail("a low surrogate") }
                            index += 2
                            let low = try readHex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("a low surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw fail("a high surrogate before a low one")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw fail("a Unicode scalar") }
                        decoded!.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        index -= 1
                        throw fail("a valid escape")
                    }
                    continue
                }
                decoded?.append(byte)
                index += 1
            }
        }

        mutating func readHex4() throws(SightingMessageError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = peek else { throw fail("4 hex digits") }
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("4 hex digits")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        /// The number's byte range, checked against JSON's number grammar.
        mutating func scanNumber() throws(SightingMessageError) -> Range<Int> {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
            guard isDigit(peek) else { throw fail("a digit") }
            if peek == UInt8(ascii: "0") { index += 1 } else { while isDigit(peek) { index += 1 } }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard isDigit(peek) else { throw fail("a digit after '.'") }
                while isDigit(peek) { index += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard isDigit(peek) else { throw fail("an exponent") }
                while isDigit(peek) { index += 1 }
            }
            return start..<index
        }

        mutating func readLiteral(_ text: StaticString) throws(SightingMessageError) {
            let literal = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            for byte in literal {
                guard peek == byte else { throw fail("'\(text)'") }
                index += 1
            }
        }

        mutating func readValue() throws(SightingMessageError) -> JSONScalar {
            switch peek {
            case UInt8(ascii: "\"")?:
                switch try readString() {
                case .range(let range): return .string(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
                case .decoded(let decoded): return .string(String(decoding: decoded, as: UTF8.self))
                }
            case UInt8(ascii: "t")?: try readLiteral("true"); return .bool(true)
            case UInt8(ascii: "f")?: try readLiteral("false"); return .bool(false)
            case UInt8(ascii: "n")?: try readLiteral("null"); return .null
            case UInt8(ascii: "{")?, UInt8(ascii: "[")?:
                try skipValue(depth: 1)
                return .composite
            default:
                let range = try scanNumber()
                // Overflowing exponents parse as ±infinity, which the range checks reject.
                let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)) ?? .nan
                return .number(value)
            }
        }

        /// Validates and skips one value of any kind.
        mutating func skipValue(depth: Int) throws(SightingMessageError) {
            switch peek {
            case UInt8(ascii: "\"")?: _ = try readString()
            case UInt8(ascii: "t")?: try readLiteral("true")
            case UInt8(ascii: "f")?: try readLiteral("false")
            case UInt8(ascii: "n")?: try readLiteral("null")
            case let open? where open == UInt8(ascii: "{") || open == UInt8(ascii: "["):
                guard depth <= FlatJSONReader.maximumDepth else {
                    throw SightingMessageError(.invalidJSON, "invalid JSON: nested deeper than \(FlatJSONReader.maximumDepth) at byte \(index)")
                }
                let isObject = open == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if peek == close { index += 1; return }
                while true {
                    skipWhitespace()
                    if isObject {
                        _ = try readString()
                        skipWhitespace()
                        try expect(UInt8(ascii: ":"), "':'")
                        skipWhitespace()
                    }
                    try skipValue(depth: depth + 1)
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") { index += 1; continue }
                    try expect(close, isObject ? "',' or '}'" : "',' or ']'")
                    return
                }
            default:
                _ = try scanNumber()
            }
        }
    }
}
