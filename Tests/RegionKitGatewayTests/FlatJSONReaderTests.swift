import Foundation
import Testing
import RegionKitCore
@testable import RegionKitGateway

@Suite("FlatJSONReader: strict JSON, only the asked members materialised")
struct FlatJSONReaderTests {
    func read(_ text: String, _ keys: [String] = ["a", "b"]) throws -> [JSONScalar?] {
        try FlatJSONReader.fields(of: Array(text.utf8), keys: keys)
    }

    @Test func valuesOfEveryKind() throws {
        let fields = try read(#" { "a" : "x\"\u00e9\ud83d\ude00\n" , "skip": [1, {"k": [true, null]}, -0.5e-3], "b":-71.56 } "#)
        #expect(fields[0] == .string("x\"é😀\n"))
        #expect(fields[1] == .number(-71.56))
        #expect(try read(#"{"a":true,"b":null}"#) == [.bool(true), .null])
        #expect(try read(#"{"a":{},"b":[]}"#) == [.composite, .composite])
        #expect(try read(#"{}"#) == [nil, nil])
        #expect(try read(#"{"a":1,"a":2}"#)[0] == .number(2), "the last of a repeated key wins")
        #expect(try read(#"{"\u0061":3}"#)[0] == .number(3), "escaped keys match")
        #expect(try read(#"{"a":1e400}"#)[0] == .number(.infinity), "overflow is infinite, then out of range for the fields")
    }

    @Test(arguments: [
        "", " ", "[1]", "\"a\"", "1", "{", "{\"a\"", "{\"a\":", "{\"a\":1", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{a:1}",
        "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":nul}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\u{01}\"}",
        "{\"a\":1} x", "{\"a\":1}{}", "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":{\"b\"}}", "{\"a\":NaN}", "{\"a\":Infinity}",
    ])
    func malformedIsRejectedAsInvalidJSON(text: String) {
        #expect(throws: SightingMessageError.self) { try read(text) }
        do { _ = try read(text) } catch let error as SightingMessageError { #expect(error.kind == .invalidJSON, "\(text): \(error)") } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test func nestingIsBounded() throws {
        let deep = "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect(throws: SightingMessageError.self) { try read(deep) }
        let fine = "{\"a\":" + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "}"
        #expect(try read(fine)[0] == .composite)
    }

    /// Property: on thousands of seeded mutations of real messages, the reader accepts exactly
    /// what Foundation's JSON parser accepts as an object, with the same values.
    @Test func agreesWithFoundationOnMutatedMessages() {
        var random = SeededRandom(seed: 11)
        let bases = [
            #"{"mac":"c3ad6e1f3a21","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2","int":102,"rssi@1m":-59,"rssi":-71.56,"raw":3.1,"distance":3.05,"close":true,"name":"a\"b"}"#,
            #"{"id":"60:87:57:4C:9B:C2","mac_type":1,"rssi":-78,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5","servicedata":[1,{"x":null}]}"#,
        ].map { Array($0.utf8) }
        let keys = ["id", "rssi", "rssi@1m", "distance", "manufacturerdata", "close"]
        let alphabet = Array(#"{}[]",:0123456789.-+eE\ "truefalsenul"#.utf8)
        var agreed = 0, accepted = 0
        for iteration in 0..<5000 {
            var bytes = bases[iteration % bases.count]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let index = Int(random.next() % UInt64(bytes.count))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0: bytes[index] = byte
                case 1: bytes.remove(at: index)
                default: bytes.insert(byte, at: index)
                }
            }
            let ours = try? FlatJSONReader.fields(of: bytes, keys: keys)
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any]
            #expect((ours != nil) == (foundation != nil), "\(String(decoding: bytes, as: UTF8.self))")
            if let ours, let foundation {
                accepted += 1
                for (slot, key) in keys.enumerated() {
                    switch (ours[slot], foundation[key]) {
                    case (nil, nil): continue
                    case (.string(let a)?, let b as String): #expect(a == b)
                    case (.bool(let a)?, let b as Bool): #expect(a == b)
                    case (.number(let a)?, let b as NSNumber): #expect(a == b.doubleValue || (a.isInfinite && b.doubleValue.isInfinite), "\(key): \(a) vs \(b)")
                    case (.null?, is NSNull): continue
                    case (.composite?, let b) where b is [Any] || b is [String: Any]: continue
                    default: Issue.record("\(key): \(String(describing: ours[slot])) vs \(String(describing: foundation[key])) in \(String(decoding: bytes, as: UTF8.self))")
                    }
                }
            }
            agreed += 1
        }
        #expect(agreed == 5000 && accepted > 200, "accepted \(accepted)")
    }
}
