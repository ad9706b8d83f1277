import Testing
import RegionKitCore
@testable import RegionKitGateway

/// ``ScannerBatch/topicLevel(scanner:)`` and ``ScannerBatch/scanner(topicLevel:)``: a RegionKit
/// scanner's name as one topic level, one-to-one, so the hub reads a status topic's level back to
/// the name the scanner's batches carry.
@Suite("RegionKit scanner topics: the name as one topic level, one-to-one")
struct ScannerBatchTopicsTests {
    @Test("Letters, digits, '_' and '-' kept; every other UTF-8 byte as %XX (upper-case hex)")
    func encoded() {
        #expect(ScannerBatch.topicLevel(scanner: "kitchen") == "kitchen")
        #expect(ScannerBatch.topicLevel(scanner: "hall_2-east") == "hall_2-east")
        #expect(ScannerBatch.topicLevel(scanner: "Living Room") == "Living%20Room")
        // ü is C3 BC in UTF-8.
        #expect(ScannerBatch.topicLevel(scanner: "Küche") == "K%C3%BCche")
        // '/', '+', '#', '%', '.', NUL: none may stand in a level as itself.
        #expect(ScannerBatch.topicLevel(scanner: "a/b+c#d%e.f\u{0}") == "a%2Fb%2Bc%23d%25e%2Ef%00")
        #expect(ScannerBatch.topicLevel(scanner: "") == "")
        #expect(ScannerBatch.topic(scanner: "Living Room") == "regionkit/scanners/Living%20Room")
        #expect(ScannerBatch.statusTopic(scanner: "garage") == "regionkit/scanners/garage/status")
        #expect(ScannerBatch.statusTopic(scanner: "Room 1", prefix: "lab/scanners") == "lab/scanners/Room%201/status")
    }

    @Test("Names that sanitizing to '_' made one topic (Room 1 and Room_1, кухня and спаль) get levels of their own")
    func oneToOne() {
        #expect(ScannerBatch.topicLevel(scanner: "Room 1") != ScannerBatch.topicLevel(scanner: "Room_1"))
        #expect(ScannerBatch.topicLevel(scanner: "кухня") != ScannerBatch.topicLevel(scanner: "спаль"))
        #expect(ScannerBatch.topicLevel(scanner: "%20") != ScannerBatch.topicLevel(scanner: " "), "a '%' is encoded too")
    }

    @Test("Read back: every name round-trips, and the level holds only letters, digits, '_', '-' and '%'")
    func roundTrip() {
        var generator = SeededRandom(seed: 0x5CA7_7E12)
        // "u" + U+0308 (combining diaeresis) and "ü" are one String for ==, not one name's bytes.
        let alphabet: [Unicode.Scalar] = ["a", "Z", "0", "_", "-", " ", ".", "/", "+", "#", "%", "\u{0}", "\u{7F}", "ü", "u", "\u{308}", "キ", "😀", "\u{FFFD}"]
        for _ in 0..<2_000 {
            let length = Int(generator.next() % 12)
            var name = ""
            for _ in 0..<length { name.unicodeScalars.append(alphabet[Int(generator.next() % UInt64(alphabet.count))]) }
            let level = ScannerBatch.topicLevel(scanner: name)
            // Byte for byte (String's == would take a normalised form for the same).
            #expect(ScannerBatch.scanner(topicLevel: level).map { Array($0.utf8) } == Array(name.utf8), "\(name.debugDescription) → \(level)")
            #expect(level.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "%")
            }, "\(level)")
        }
    }

    @Test("Lenient reading: lower-case hex and characters left unencoded (a status published by hand) read as themselves")
    func lenient() {
        #expect(ScannerBatch.scanner(topicLevel: "living%20room") == "living room")
        #expect(ScannerBatch.scanner(topicLevel: "K%c3%bcche") == "Küche")
        #expect(ScannerBatch.scanner(topicLevel: "Küche") == "Küche")
        #expect(ScannerBatch.scanner(topicLevel: "Living Room") == "Living Room")
    }

    @Test("Not a level of a name: a '%' without two hex digits, or bytes that are not UTF-8", arguments: [
        "100%", "a%2", "%G0", "%%41", "%FF", "%C3", "%C3%28",
    ])
    func malformed(level: String) {
        #expect(ScannerBatch.scanner(topicLevel: level) == nil)
    }

    @Test("A status on RegionKit's topic names the scanner its batches name; a level that reads back to nothing is rejected with the topic named")
    func status() throws {
        let filter = SightingMessageFormat.regionkit.defaultStatusFilter
        #expect(filter == "regionkit/scanners/+/status")
        #expect(SightingMessageFormat.regionkit.encodesScannerNames && !SightingMessageFormat.espresense.encodesScannerNames)
        let topic = ScannerBatch.statusTopic(scanner: "Living Room")
        let status = try ScannerStatusMessage.decode(topic: topic, payload: Array("offline".utf8), filter: filter, scanner: nil, encodedNames: true)
        #expect(status == ScannerStatusMessage(scanner: "Living Room", online: false))
        // Without encodedNames (another format's filter) the level is the name as it stands.
        let raw = try ScannerStatusMessage.decode(topic: topic, payload: Array("online".utf8), filter: filter, scanner: nil)
        #expect(raw.scanner == "Living%20Room")
        for bad in ["regionkit/scanners/100%/status", "regionkit/scanners/%FF/status", "regionkit/scanners//status"] {
            do {
                _ = try ScannerStatusMessage.decode(topic: bad, payload: Array("offline".utf8), filter: filter, scanner: nil, encodedNames: true)
                Issue.record("\(bad) accepted")
            } catch {
                #expect(error.kind == .badTopic && error.message.contains(bad), "\(error)")
            }
        }
        // 43 × 'é' (2 bytes each, %C3%A9 encoded) is 86 bytes: a name; 65 of them, 130 bytes, is not.
        let long = String(repeating: "é", count: 65)
        do {
            _ = try ScannerStatusMessage.decode(topic: ScannerBatch.statusTopic(scanner: long), payload: [], filter: filter, scanner: nil, encodedNames: true)
            Issue.record("a 130-byte name accepted")
        } catch {
            #expect(error.kind == .badTopic, "\(error)")
        }
        let fits = String(repeating: "é", count: 43)
        #expect(try ScannerStatusMessage.decode(topic: ScannerBatch.statusTopic(scanner: fits), payload: [], filter: filter, scanner: nil, encodedNames: true).scanner == fits)
    }
}
