import Foundation

/// A JSON text written by hand, byte for byte as Foundation's `JSONEncoder` with `.sortedKeys`
/// writes it (strings escaped as it escapes them, `/` included; numbers as their shortest
/// round-trip form without a trailing `.0`): for the listings too large for the encoder's keyed
/// containers (`GET /v1/regions`: `JSONEncoder` was 46 % of a listing's time). The caller writes
/// the keys of each object in sorted order; `RegionReportJSONTests` holds the output to the
/// encoder's.
///
/// ```swift
/// var json = JSONBytes()
/// json.beginObject()
/// json.key("identifier"); json.string("lobby")
/// json.key("radius"); json.number(100.0)
/// json.endObject()
/// json.bytes   // {"identifier":"lobby","radius":100}
/// ```
struct JSONBytes {
    private(set) var bytes: [UInt8] = []
    /// Whether the container open now has nothing in it yet (no comma before its next member).
    private var first = true

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// A member's key: plain ASCII needing no escape (the callers' are literals).
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))   // (an array literal of the two was allocated per key: `perf`)
        bytes.append(UInt8(ascii: ":"))
        first = true   // the value follows without a comma
    }

    mutating func string(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() {
                // Most bytes need nothing: tested inline before the table is asked.
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/"),
                      let escape = Self.escape(byte) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                bytes.append(contentsOf: escape)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        first = false
    }

    mutating func number(_ value: Double) {
        separate()
        // `JSONEncoder` refuses a non-finite number; a report never holds one (the engine's
        // times and the regions' coordinates are checked), and `null` keeps the text JSON.
        guard value.isFinite else { return literal("null") }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        first = false
    }

    mutating func number(_ value: some BinaryInteger) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        first = false
    }

    mutating func bool(_ value: Bool) {
        separate()
        literal(value ? "true" : "false")
    }

    mutating func null() {
        separate()
        literal("null")
    }

    /// The escape `JSONEncoder` writes for `byte`, if any: `"`, `\`, `/` and the controls
    /// (`\b \t \n \f \r`, else `\u00XX` in lower-case hex). Multi-byte UTF-8 is never escaped.
    static func escape(_ byte: UInt8) -> [UInt8]? {
        switch byte {
        case UInt8(ascii: "\""): return Array(#"\""#.utf8)
        case UInt8(ascii: "\\"): return Array(#"\\"#.utf8)
        case UInt8(ascii: "/"): return Array(#"\/"#.utf8)
        case 0x08: return Array(#"\b"#.utf8)
        case 0x09: return Array(#"\t"#.utf8)
        case 0x0A: return Array(#"\n"#.utf8)
        case 0x0C: return Array(#"\f"#.utf8)
        case 0x0D: return Array(#"\r"#.utf8)
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            return Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        default: return nil
        }
    }

    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        first = false
    }

    /// A container begins: nothing in it yet.
    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        first = true
    }

    /// A container ends: the one around it has a member now.
    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        first = false
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
    }
}
