import Foundation

extension JSONValue {
    /// The first key that appears twice in one object of `json`, a text that already decoded as
    /// JSON. Foundation's decoders collapse such keys without a word — `JSONDecoder` keeps the
    /// first value, `JSONSerialization` and most other parsers the last — so
    /// `{"radius": 50, "radius": 5000}` made a region of 50 m while the sender's own tools read
    /// 5000. Keys are compared as decoded text (`"a"` and `"\u0061"` are one key).
    ///
    /// ```swift
    /// JSONValue.firstDuplicateKey(in: Data(#"{"a": 1, "b": {"a": 2}}"#.utf8))   // nil: two objects
    /// JSONValue.firstDuplicateKey(in: Data(#"{"a": 1, "a": 2}"#.utf8))          // "a"
    /// ```
    static func firstDuplicateKey(in json: Data) -> String? {
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
                if open[innermost]?.insert(key).inserted == false { return key }
            default: break
            }
            index += 1
        }
        return nil
    }
}
