import Foundation
import Testing
import RegionKitCore

/// ``JSONSyntaxError/first(in:)``: where a text breaks JSON's grammar, in the words a person who
/// wrote the file needs (line, column, what was expected, what was found), and nil for every
/// valid text; checked against Foundation's own parser on thousands of mutated documents.
@Suite("JSON files: where the syntax breaks")
struct JSONSyntaxErrorTests {
    @Test("The usual mistakes are named at their line and column", arguments: [
        ("{\n  \"a\": [1, 2}\n}", "2:13: expected ',' or ']', found '}'"),
        ("[1,,]", "1:4: expected a value after ',', found ','"),
        ("{,}", "1:2: expected a key in double quotes or '}', found ','"),
        ("[,]", "1:2: expected a value or ']', found ','"),
        ("[\"\\uDC00\"]", "1:3: '\\uDC00' is the second half of a surrogate pair without its first"),
        ("[\"\\ud800x\"]", "1:3: '\\ud800' is the first half of a surrogate pair without its second ('\\uDC00' to '\\uDFFF' after it)"),
        ("[\"\\uD800\\u0041\"]", "1:3: '\\uD800' is the first half of a surrogate pair without its second ('\\uDC00' to '\\uDFFF' after it)"),
        ("{\"a\": 1\n \"b\": 2}", "2:2: expected ',' or '}', found '\"' (a missing ','?)"),
        ("[1 2]", "1:4: expected ',' or ']', found '2' (a missing ','?)"),
        ("{'a': 1}", "1:2: expected a key in double quotes or '}', found ''' (JSON text takes double quotes)"),
        ("{\"a\": 1 // note\n}", "1:9: expected ',' or '}', found '/' (JSON has no comments)"),
        ("{\"a\" 1}", "1:6: expected ':' after the key, found '1'"),
        ("{\"a\": tru}", "1:7: expected a value after ':', found 'tru'"),
        ("{\"a\": [1, 2}", "1:12: expected ',' or ']', found '}'"),
        ("{\"a\": [1, 2]", "1:13: expected ',' or '}', found the end of the text (1 bracket still open)"),
        ("[[[", "1:4: expected a value or ']', found the end of the text (3 brackets still open)"),
        ("", "1:1: expected a JSON value, found the end of the text"),
        ("  \n ", "2:2: expected a JSON value, found the end of the text"),
        ("{} {}", "1:4: expected the end of the text after the JSON value, found '{'"),
        ("{\"a\": \"abc}", "1:7: this string is never closed (no '\"' before the end of the text)"),
        ("{\"a\": \"tab\there\"}", "1:11: control byte 0x09 inside a string (a line break or tab in text is written \\n or \\t)"),
        ("[\"\\x\"]", "1:3: '\\' followed by 'x' inside a string (escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"),
        ("[\"\\u12g4\"]", "1:3: '\\u' takes four hexadecimal digits, found 'g' inside a string"),
        ("[01]", "1:2: '01' is not a number: a number does not start with 0"),
        ("[1.]", "1:2: '1.' is not a number: expected a digit after '.'"),
        ("[-]", "1:2: '-' is not a number: expected a digit after '-'"),
        ("[1e+]", "1:2: '1e+' is not a number: expected a digit in the exponent"),
        ("[12px]", "1:2: '12px' is not a number: unexpected 'p' in it"),
        ("[+1]", "1:2: expected a value or ']', found '+'"),
        ("{\"é\": x}", "1:8: expected a value after ':', found 'x'"),          // the column counts bytes: é is two
        (String(repeating: "[", count: 513) + String(repeating: "]", count: 513), "1:513: objects and lists nested more than 512 deep"),
    ])
    func named(json: String, expected: String) {
        #expect(JSONSyntaxError.first(in: Array(json.utf8))?.description == expected, "\(json)")
    }

    @Test("Bytes that are not UTF-8 are named at the first of them; UTF-16 and UTF-32, which Foundation reads, are not checked")
    func notUTF8() {
        let found = JSONSyntaxError.first(in: Array("{\"a\":\n \"".utf8) + [0xC3, 0x28] + Array("\"}".utf8))
        #expect(found?.description == "2:3: not valid UTF-8" && found?.offset == 8)
        let utf16 = Array("{\"major\": 70000}".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(JSONSyntaxError.first(in: utf16) == nil && JSONSyntaxError.first(in: [0xFF, 0xFE] + utf16) == nil)
    }

    /// Any JSON value, decoded through `JSONDecoder` (the decoder RegionKit's files go through).
    struct AnyJSON: Decodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        init(from decoder: any Decoder) throws {
            if var list = try? decoder.unkeyedContainer() {
                while !list.isAtEnd { _ = try list.decode(AnyJSON.self) }
            } else if let object = try? decoder.container(keyedBy: Key.self) {
                for key in object.allKeys { _ = try object.decode(AnyJSON.self, forKey: key) }
            } else {
                let single = try decoder.singleValueContainer()
                if single.decodeNil() || (try? single.decode(Bool.self)) != nil || (try? single.decode(Double.self)) != nil { return }
                _ = try single.decode(String.self)
            }
        }
    }

    @Test("Valid texts of every kind have no error", arguments: [
        "{}", "[]", "0", "-0.5e-3", "1E+2", "\"text\"", "true", "false", "null", " \n\t\r{ \"a\" : [ 1 , { } , [ ] , \"\\u00e9\\n\\\"\" ] } \n",
        "\u{FEFF}{\"bom\": 1}", "[1, 2,]", "{\"a\": [1,], \"b\": {\"c\": 1 ,} ,}", "[\"\\uD83D\\uDE00\"]", String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
    ])
    func valid(json: String) {
        #expect(JSONSyntaxError.first(in: Array(json.utf8)) == nil, "\(json.prefix(60))")
    }

    /// Mutations of a document RegionKit reads (insert, delete or replace a byte from JSON's own
    /// alphabet): the reader finds an error exactly when Foundation refuses the text, and its
    /// offset is inside the text. (Digits stay few, so no number is beyond a Double: Foundation
    /// refuses `1e309`, which is JSON.)
    @Test("Agrees with Foundation's parsers (JSONSerialization and JSONDecoder) on 20,000 mutated documents")
    func agreesWithFoundation() throws {
        let seed = Array(#"""
        {"duration": 120, "beacons": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2,
          "position": [1.5, -2e1], "name": "a\"b\\c\/d\n\uD83D\uDE00\u00e9"}], "regions": [], "flags": [true, false, null]}
        """#.utf8)
        let alphabet = Array(#"{}[],:" 0123.-eE+tfnlrsa\/buD"#.utf8) + [0x0A, 0x09]
        var random = SeededRandom(seed: 13)
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            var text = seed
            for _ in 0...Int(random.next() % 3) {
                let at = Int(random.next() % UInt64(text.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0: text.insert(byte, at: at)
                case 1: text.remove(at: at)
                default: text[at] = byte
                }
            }
            let found = JSONSyntaxError.first(in: text)
            let serialization = (try? JSONSerialization.jsonObject(with: Data(text), options: [.fragmentsAllowed])) != nil
            let decoder = (try? JSONDecoder().decode(AnyJSON.self, from: Data(text))) != nil
            if (found == nil) != serialization || (found == nil) != decoder, disagreements.count < 5 {
                disagreements.append("\(String(decoding: text, as: UTF8.self)) → \(found?.description ?? "valid"), JSONSerialization: \(serialization), JSONDecoder: \(decoder)")
            }
            if let found { #expect((0...text.count).contains(found.offset)) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }
}
