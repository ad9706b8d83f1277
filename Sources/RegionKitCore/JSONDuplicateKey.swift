import Foundation

/// A key given twice in one object of a JSON text, and where its second occurrence is.
///
/// Foundation's decoders collapse such keys without a word — `JSONDecoder` keeps the first value,
/// `JSONSerialization` and most other parsers the last — so `{"radius": 50, "radius": 5000}` made
/// a region of 50 m while the author's own tools read 5000. Every JSON file and body RegionKit is
/// given (HTTP bodies, scenario, regions, GeoJSON and distance model files) is refused with this
/// instead. Keys are compared as decoded text (`"a"` and `"\u0061"` are one key).
///
/// ```swift
/// JSONDuplicateKey.first(in: Data(#"{"a": 1, "b": {"a": 2}}"#.utf8))        // nil: two objects
/// JSONDuplicateKey.first(in: Data(#"{"a": 1,\n "a": 2}"#.utf8))?.line       // 2
/// ```
public struct JSONDuplicateKey: Hashable, Sendable, CustomStringConvertible {
    /// The key, decoded.
    public var key: String
    /// Line (from 1) and column (from 1, in bytes) of the key's second occurrence.
    public var line: Int
    public var column: Int

    public var description: String { "\(line):\(column): '\(key.prefix(80))' is given twice in one object" }

    /// The first key given twice in one object of `json`, a text that already decoded as JSON
    /// (on any other bytes it returns without reading out of bounds, and its answer means nothing).
    public static func first(in json: Data) -> JSONDuplicateKey? {
        let bytes = [UInt8](json)
        // One set of keys per object open around the current position; nil for an array.
        var open: [Set<String>?] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"): open.append([])
            case UInt8(ascii: "["): open.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = open.popLast()
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") { escaped = true; index += 1 }
                    index += 1
                }
                let token = bytes[start...min(index, bytes.count - 1)]
                // A string followed by a colon is a key of the innermost object.
                var next = index + 1
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                guard next < bytes.count, bytes[next] == UInt8(ascii: ":"), let innermost = open.indices.last, open[innermost] != nil else { break }
                let key = escaped ? (try? JSONDecoder().decode(String.self, from: Data(token))) ?? ""
                                  : String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
                if open[innermost]?.insert(key).inserted == false {
                    let before = bytes[..<start]
                    let line = before.lazy.filter { $0 == 0x0A }.count + 1
                    let column = start - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
                    return JSONDuplicateKey(key: key, line: line, column: column)
                }
            default: break
            }
            index += 1
        }
        return nil
    }
}
