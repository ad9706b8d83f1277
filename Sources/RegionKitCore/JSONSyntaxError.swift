/// The first place a text breaks JSON's grammar (RFC 8259), and what was expected there.
///
/// Foundation's `JSONDecoder` on Linux says only "The given data was not valid JSON." of a
/// scenario, region or model file with a missing comma or an unclosed bracket, with neither line
/// nor column; RegionKit asks this reader where the text breaks when Foundation refuses a text,
/// and says that instead. It reads the bytes once, with an explicit stack (no recursion: any
/// depth of nesting is read without growing the call stack), and never reads out of bounds.
///
/// ```swift
/// JSONSyntaxError.first(in: Array("{\n  \"a\": [1, 2}\n}".utf8))?.description
/// // "2:13: expected ',' or ']', found '}'"
/// JSONSyntaxError.first(in: Array(#"{"a": [1, 2]}"#.utf8))   // nil: valid JSON
/// ```
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Line (from 1) and column (from 1, in bytes) of the first byte that breaks the grammar.
    public var line: Int
    public var column: Int
    /// The byte offset (from 0) of that byte; the text's length when the text ends too early.
    public var offset: Int
    /// What was expected and what was found, in words.
    public var message: String

    public var description: String { "\(line):\(column): \(message)" }

    /// The first syntax error in `json`, or nil when it is one JSON value (of any kind, with
    /// whitespace around it). It reads what Foundation reads: a leading UTF-8 byte order mark and
    /// one trailing comma in an object or a list (`[1, 2,]`) are allowed, a lone surrogate escape
    /// (`"\uD800"`) and nesting deeper than ``maximumDepth`` are not. A text in UTF-16 or UTF-32
    /// (a byte order mark, or a zero byte among the first two), which Foundation reads and this
    /// reader does not, is not checked: nil.
    public static func first(in json: some Collection<UInt8>) -> JSONSyntaxError? {
        let bytes = Array(json)
        if bytes.count >= 2, bytes[0] == 0 || bytes[1] == 0 || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return nil }
        var reader = Reader(bytes: bytes)
        return reader.firstError()
    }

    /// The deepest nesting of objects and lists Foundation's decoders read.
    public static let maximumDepth = 512

    /// The grammar, read byte by byte.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        enum Container { case object, array }
        /// What may come next.
        enum Expect {
            /// A value: at the top, after `:` and after `,` in an array.
            case value(after: String?)
            /// After `[`: a value or `]`.
            case valueOrClose
            /// After `{`: a key or `}`.
            case keyOrClose
            /// After `,` in an object.
            case key
            /// After a key.
            case colon
            /// After a value inside a container.
            case commaOrClose
            /// After the top-level value: only whitespace.
            case end

            /// Whether `]` may come here: after `[`, and after `,` in a list.
            var closesArray: Bool {
                switch self {
                case .valueOrClose, .value(after: "','"?): true
                default: false
                }
            }
        }

        mutating func firstError() -> JSONSyntaxError? {
            if let invalid = String.firstInvalidUTF8(in: bytes) { return error(at: invalid, "not valid UTF-8") }
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
            var stack: [Container] = []
            var expect = Expect.value(after: nil)
            while true {
                skipWhitespace()
                guard index < bytes.count else {
                    if case .end = expect { return nil }
                    return error(at: index, "expected \(words(expect, stack)), found the end of the text"
                                 + (stack.isEmpty ? "" : " (\(stack.count) bracket\(stack.count == 1 ? "" : "s") still open)"))
                }
                let byte = bytes[index]
                switch expect {
                case .value, .valueOrClose:
                    // Foundation reads one trailing comma (`[1, 2,]`) as the end of the list.
                    if byte == UInt8(ascii: "]"), stack.last == .array, expect.closesArray {
                        stack.removeLast()
                        index += 1
                        expect = stack.isEmpty ? .end : .commaOrClose
                        continue
                    }
                    if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "["), stack.count == JSONSyntaxError.maximumDepth {
                        return error(at: index, "objects and lists nested more than \(JSONSyntaxError.maximumDepth) deep")
                    }
                    switch byte {
                    case UInt8(ascii: "{"): stack.append(.object); index += 1; expect = .keyOrClose
                    case UInt8(ascii: "["): stack.append(.array); index += 1; expect = .valueOrClose
                    default:
                        if let problem = scalarValue(expect, stack) { return problem }
                        expect = stack.isEmpty ? .end : .commaOrClose
                    }
                case .keyOrClose, .key:
                    // `{` or a trailing comma (`{"a": 1,}`, which Foundation reads) before `}`.
                    if byte == UInt8(ascii: "}") {
                        stack.removeLast()
                        index += 1
                        expect = stack.isEmpty ? .end : .commaOrClose
                        continue
                    }
                    guard byte == UInt8(ascii: "\"") else {
                        return error(at: index, "expected \(words(expect, stack)), found \(found(byte))\(hint(byte))")
                    }
                    if let problem = string() { return problem }
                    expect = .colon
                case .colon:
                    guard byte == UInt8(ascii: ":") else { return error(at: index, "expected ':' after the key, found \(found(byte))") }
                    index += 1
                    expect = .value(after: "':'")
                case .commaOrClose:
                    let close = stack.last == .object ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if byte == close {
                        stack.removeLast()
                        index += 1
                        expect = stack.isEmpty ? .end : .commaOrClose
                    } else if byte == UInt8(ascii: ",") {
                        index += 1
                        expect = stack.last == .object ? .key : .value(after: "','")
                    } else {
                        let missing = byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")
                            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") ? " (a missing ','?)" : hint(byte)
                        return error(at: index, "expected \(words(expect, stack)), found \(found(byte))\(missing)")
                    }
                case .end:
                    return error(at: index, "expected the end of the text after the JSON value, found \(found(byte))")
                }
            }
        }

        /// Reads a string, number or literal at `index`; an error words what was `expect`ed.
        mutating func scalarValue(_ expect: Expect, _ stack: [Container]) -> JSONSyntaxError? {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return string() }
            if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return number() }
            let start = index
            var end = index
            while end < bytes.count, end - start < 64, isWordByte(bytes[end]) { end += 1 }
            let word = String(decoding: bytes[start..<end], as: UTF8.self)
            if word == "true" || word == "false" || word == "null" {
                index = end
                return nil
            }
            let what = word.isEmpty ? found(byte) + hint(byte) : "'\(word.prefix(40))'"
            return error(at: start, "expected \(words(expect, stack)), found \(what)")
        }

        /// Reads a string at `index` (its opening quote) through its closing quote.
        mutating func string() -> JSONSyntaxError? {
            let open = index
            index += 1
            scan: while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return nil
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count else { break scan }
                    let escape = bytes[index + 1]
                    if escape == UInt8(ascii: "u") {
                        var digits = 0
                        while digits < 4, index + 2 + digits < bytes.count, isHexDigit(bytes[index + 2 + digits]) { digits += 1 }
                        guard digits == 4 else {
                            guard index + 2 + digits < bytes.count else { break scan }
                            return error(at: index, "'\\u' takes four hexadecimal digits, found \(found(bytes[index + 2 + digits])) inside a string")
                        }
                        // A character beyond U+FFFF is two escapes, a high then a low surrogate;
                        // either alone is no character (Foundation refuses it).
                        let unit = hexValue(index + 2)
                        if (0xDC00...0xDFFF).contains(unit) {
                            return error(at: index, "'\\u\(hexText(index + 2))' is the second half of a surrogate pair without its first")
                        }
                        if (0xD800...0xDBFF).contains(unit) {
                            guard index + 11 < bytes.count, bytes[index + 6] == UInt8(ascii: "\\"), bytes[index + 7] == UInt8(ascii: "u"),
                                  (index + 8...index + 11).allSatisfy({ isHexDigit(bytes[$0]) }), (0xDC00...0xDFFF).contains(hexValue(index + 8)) else {
                                if index + 11 >= bytes.count, !bytes[(index + 6)...].contains(UInt8(ascii: "\"")) { break scan }
                                return error(at: index, "'\\u\(hexText(index + 2))' is the first half of a surrogate pair without its second ('\\uDC00' to '\\uDFFF' after it)")
                            }
                            index += 6
                        }
                        index += 6
                    } else if Array("\"\\/bfnrt".utf8).contains(escape) {
                        index += 2
                    } else {
                        return error(at: index, "'\\' followed by \(found(escape)) inside a string (escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
                    }
                case 0x00..<0x20:
                    return error(at: index, "control byte \(hex(byte)) inside a string (a line break or tab in text is written \\n or \\t)")
                default:
                    index += 1
                }
            }
            return error(at: open, "this string is never closed (no '\"' before the end of the text)")
        }

        /// Reads a number at `index`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() -> JSONSyntaxError? {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            func bad(_ why: String) -> JSONSyntaxError {
                var end = start
                while end < bytes.count, end - start < 40, isWordByte(bytes[end]) || Array("+-.".utf8).contains(bytes[end]) { end += 1 }
                return error(at: start, "'\(String(decoding: bytes[start..<max(end, index)], as: UTF8.self).prefix(40))' is not a number: \(why)")
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0 else { return bad("expected a digit after '-'") }
            if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") { return bad("a number does not start with 0") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return bad("expected a digit after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return bad("expected a digit in the exponent") }
            }
            if index < bytes.count, isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
                return bad("unexpected \(found(bytes[index])) in it")
            }
            return nil
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        func error(at offset: Int, _ message: String) -> JSONSyntaxError {
            let before = bytes[..<min(offset, bytes.count)]
            let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            return JSONSyntaxError(line: before.lazy.filter { $0 == 0x0A }.count + 1, column: offset - lineStart + 1, offset: offset, message: message)
        }

        func words(_ expect: Expect, _ stack: [Container]) -> String {
            switch expect {
            case .value(let after?): "a value after \(after)"
            case .value(nil): "a JSON value"
            case .valueOrClose: "a value or ']'"
            case .keyOrClose: "a key in double quotes or '}'"
            case .key: "a key in double quotes after ','"
            case .colon: "':'"
            case .commaOrClose: stack.last == .object ? "',' or '}'" : "',' or ']'"
            case .end: "the end of the text"
            }
        }

        func found(_ byte: UInt8) -> String {
            (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : (byte >= 0x80 ? "a non-ASCII character" : "byte \(hex(byte))")
        }

        /// Why a byte that cannot start anything here may have been written.
        func hint(_ byte: UInt8) -> String {
            switch byte {
            case UInt8(ascii: "'"): " (JSON text takes double quotes)"
            case UInt8(ascii: "/"), UInt8(ascii: "#"): " (JSON has no comments)"
            default: ""
            }
        }

        func hex(_ byte: UInt8) -> String {
            let digits = Array("0123456789ABCDEF".utf8)
            return "0x" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }

        func isWordByte(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }

        /// The four hexadecimal digits from `offset` (checked by the caller) as a number.
        func hexValue(_ offset: Int) -> Int {
            bytes[offset..<offset + 4].reduce(0) { value, byte in
                let digit = byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : (byte | 0x20) - UInt8(ascii: "a") + 10
                return value << 4 | Int(digit)
            }
        }

        func hexText(_ offset: Int) -> String { String(decoding: bytes[offset..<offset + 4], as: UTF8.self) }

        func isHexDigit(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
