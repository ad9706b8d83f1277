import Foundation
import Testing
@testable import RegionKitHTTP

/// ``JSONValue/firstDuplicateKey(in:)``: a key given twice in one object, wherever the object is;
/// keys of different objects, and text that only looks like a key, are not duplicates.
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
        #expect(JSONValue.firstDuplicateKey(in: Data(json.utf8)) == key, "\(json)")
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
        #expect(JSONValue.firstDuplicateKey(in: Data(json.utf8)) == nil, "\(json)")
    }
}
