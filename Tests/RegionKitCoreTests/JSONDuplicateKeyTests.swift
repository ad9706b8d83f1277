import Foundation
import Testing
import RegionKitCore

/// ``JSONDuplicateKey/first(in:)``: a key given twice in one object, wherever the object is, with
/// where its second occurrence is; keys of different objects, and text that only looks like a key,
/// are not duplicates.
@Suite("JSON bodies: a key given twice")
struct JSONDuplicateKeyTests {
    @Test("Duplicates are found in any object, compared as decoded text", arguments: [
        (#"{"a": 1, "a": 2}"#, "a"),
        (#"{"a": 1, "b": {"c": 1, "c": 2}}"#, "c"),                 // in a nested object
        (#"[{"x": 1}, {"y": 1, "y": [1]}]"#, "y"),                   // in an array's object
        (#"{"\u0061": 1, "a": 2}"#, "a"),                            // an escape is the same key
        (#"{"q\"": 1, "q\"" : 2}"#, "q\""),                           // an escaped quote inside the key; space before the colon
        (#"{"é": 1, "\u00e9": 2}"#, "é"),
    ])
    func found(json: String, key: String) {
        #expect(JSONDuplicateKey.first(in: Data(json.utf8))?.key == key, "\(json)")
    }

    @Test("Not duplicates: keys of sibling or nested objects, string values equal to a key, braces and colons inside strings", arguments: [
        #"{"a": 1, "b": {"a": 2}}"#,
        #"[{"a": 1}, {"a": 2}]"#,
        #"{"a": "a", "b": ["a", "a"]}"#,
        #"{"a": "{\"a\": 1}", "b": "x:y", "c": "\\"}"#,
        #"{"a": {}, "b": [], "c": {"d": {"e": 1}}, "e": 2}"#,
        #"[]"#,
        #""text""#,
    ])
    func none(json: String) {
        #expect(JSONDuplicateKey.first(in: Data(json.utf8)) == nil, "\(json)")
    }

    @Test("The second occurrence's line and column (from 1; the column in bytes)")
    func position() {
        let json = "{\n  \"a\": 1,\n  \"b\": {\"c\": 2, \"c\": 3}\n}"
        let found = JSONDuplicateKey.first(in: Data(json.utf8))
        #expect(found?.key == "c" && found?.line == 3 && found?.column == 17, "\(String(describing: found))")
        #expect(JSONDuplicateKey.first(in: Data(#"{"a":1,"a":2}"#.utf8))?.description == "1:8: 'a' is given twice in one object")
    }

    @Test("Bytes that are no JSON (cut anywhere, a backslash at the end, unbalanced brackets): an answer, never a crash")
    func hostileBytes() {
        let text = Array(#"{"a": [1, {"b"": "x\"}], "ab": {"c": 1}}"#.utf8)
        for cut in 0...text.count {
            _ = JSONDuplicateKey.first(in: Data(text[..<cut]))
            _ = JSONDuplicateKey.first(in: Data(text[cut...]))
        }
        for bytes: [UInt8] in [[0x22], [0x22, 0x5C], [0x7D, 0x5D, 0x7D], [0x7B, 0x22, 0x61, 0x22, 0x3A], [0x7B, 0x22, 0x5C]] {
            _ = JSONDuplicateKey.first(in: Data(bytes))
        }
    }
}
