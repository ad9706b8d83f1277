import Foundation
import Testing
import RegionKitTestSupport
import RegionKitCore
@testable import RegionKitGateway

@Suite("Gateway recordings: concatenated JSON, gzip, errors with offsets")
struct GatewayReaderTests {
    static func sighting(_ minor: Int, time: Int64, rssi: Int = -70, pretty: Bool = false) -> String {
        let fields = [#""scannerID": "Room201""#, #""uuid": "DAF246CE836311E4B116123B93F75CBA""#, #""major": 0"#,
                      "\"minor\": \(minor)", #""power": 0"#, #""calibratedPower": -62"#, "\"rssi\": \(rssi)", "\"time\": \(time)"]
        return pretty ? "{\n  " + fields.joined(separator: ",\n  ") + "\n}" : "{" + fields.joined(separator: ",") + "}"
    }

    @Test func splitsConcatenatedObjectsAtAnyChunking() throws {
        let text = #"{"a":"}{\"x"}{"b":{"c":[1,{"d":2}]}} "# + "\n" + #"{"e":"\\"}"#
        let bytes = Array(text.utf8)
        for chunk in 1...bytes.count {
            var splitter = ConcatenatedJSONSplitter()
            var objects: [ConcatenatedJSONSplitter.Object] = []
            var index = 0
            while index < bytes.count {
                objects += try splitter.feed(Array(bytes[index..<min(index + chunk, bytes.count)]))
                index += chunk
            }
            try splitter.finish()
            #expect(objects.map(\.offset) == [0, 13, 38], "chunk \(chunk)") // 13 + 23 bytes, then a space and a newline
            #expect(String(decoding: objects[0].bytes, as: UTF8.self) == #"{"a":"}{\"x"}"#)
        }
    }

    @Test func garbageBetweenObjectsIsRejectedWithItsOffset() {
        var splitter = ConcatenatedJSONSplitter(source: "run.json")
        #expect {
            _ = try splitter.feed(Array(#"{"a":1} x{"b":2}"#.utf8))
        } throws: { ($0 as? RegionKitError)?.message == "run.json: unexpected byte 0x78 ('x') at offset 8 between JSON objects" }
    }

    @Test func anUnclosedObjectAtTheEndIsTruncation() throws {
        var splitter = ConcatenatedJSONSplitter(source: "run.json")
        let objects = try splitter.feed(Array(#"{"a":1}{"b":"#.utf8))
        #expect(objects.count == 1)
        #expect { try splitter.finish() } throws: { ($0 as? RegionKitError)?.message.contains("object starting at offset 7 is not closed") == true }
    }

    @Test func decodesPrettyPrintedSightings() throws {
        let object = Self.sighting(3, time: 1_425_417_360_553, pretty: true)
        let sighting = try GatewaySighting(json: Array(object.utf8), offset: 0, source: "x")
        #expect(sighting.scannerID == "Room201")
        #expect(sighting.identity.uuid.uuidString == "DAF246CE-8363-11E4-B116-123B93F75CBA")
        #expect(sighting.identity.minor == 3)
        #expect(sighting.measuredPower == -62)
        #expect(sighting.messageType == nil)
        #expect(sighting.observation(originMilliseconds: 1_425_417_360_000).timestamp == Timestamp(seconds: 0.553))
    }

    @Test("Bad sightings name the object's offset and the field", arguments: [
        (#"{"uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 0, "minor": 1, "rssi": -70, "time": 1}"#, "missing string field 'scannerID'"),
        (#"{"scannerID": "R", "uuid": "XYZ", "major": 0, "minor": 1, "rssi": -70, "time": 1}"#, "uuid 'XYZ'"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": "zero", "minor": 1, "rssi": -70, "time": 1}"#, "field 'major' is not an integer"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 70000, "minor": 1, "rssi": -70, "time": 1}"#, "outside 0...65535"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 0, "minor": 1, "rssi": -70}"#, "missing integer field 'time'"),
    ])
    func badSightings(json: String, expected: String) {
        #expect {
            _ = try GatewaySighting(json: Array(json.utf8), offset: 1234, source: "run.json")
        } throws: { error in
            let message = (error as? RegionKitError)?.message ?? ""
            return message.hasPrefix("run.json: sighting at offset 1234: ") && message.contains(expected)
        }
    }

    @Test func readsPlainAndGzipFilesIncludingConcatenatedMembers() throws {
        let first = (0..<500).map { Self.sighting($0 % 4, time: 1000 + Int64($0) * 100, pretty: $0 % 2 == 0) }.joined()
        let second = (500..<800).map { Self.sighting($0 % 4, time: 1000 + Int64($0) * 100) }.joined()
        let plain = try Fixtures.temporaryFile(Data((first + second).utf8), suffix: ".json")
        let gz = try Fixtures.temporaryFile(try Fixtures.gzip(Data(first.utf8)) + (try Fixtures.gzip(Data(second.utf8))), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: plain); try? FileManager.default.removeItem(atPath: gz) }
        for path in [plain, gz] {
            var reader = GatewayFileReader(path: path)
            reader.chunkSize = 777
            var times: [Int64] = []
            let count = try reader.forEach { times.append($0.timeMilliseconds) }
            #expect(count == 800)
            #expect(times == (0..<800).map { 1000 + Int64($0) * 100 })
        }
    }

    @Test func corruptGzipKeepsWhatWasReadAndSaysWhere() throws {
        let body = (0..<4000).map { Self.sighting($0 % 4, time: Int64($0) * 100, rssi: -40 - $0 % 50) }.joined()
        var compressed = [UInt8](try Fixtures.gzip(Data(body.utf8)))
        let damage = compressed.count / 2
        for index in damage..<(damage + 64) { compressed[index] ^= 0x5A }
        let path = try Fixtures.temporaryFile(Data(compressed), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = GatewayFileReader(path: path)
        reader.chunkSize = 1024
        var delivered = 0
        #expect {
            try reader.forEach { _ in delivered += 1 }
        } throws: { error in
            let message = (error as? RegionKitError)?.message ?? ""
            return message.contains(path) && (message.contains("corrupt gzip data near compressed byte") || message.contains("sighting at offset"))
        }
        #expect(delivered > 100 && delivered < 4000, "kept \(delivered) sightings read before the damage")
    }

    @Test func truncatedGzipIsReportedAfterDeliveringTheIntactPart() throws {
        let body = (0..<2000).map { Self.sighting($0 % 4, time: Int64($0) * 100) }.joined()
        let compressed = [UInt8](try Fixtures.gzip(Data(body.utf8)))
        let path = try Fixtures.temporaryFile(Data(compressed[0..<(compressed.count * 2 / 3)]), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var delivered = 0
        #expect {
            try GatewayFileReader(path: path).forEach { _ in delivered += 1 }
        } throws: { error in
            let message = (error as? RegionKitError)?.message ?? ""
            return message.contains("truncated") && message.contains(path)
        }
        #expect(delivered > 500 && delivered < 2000)
    }

    @Test(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
    func readsTheRealRecordings() throws {
        // Counts from the recordings' README.
        for (name, count) in [("TwoScannersRun1-2015-03-03.json.gz", 39_802), ("FourScannersRun1-2015-03-07.json.gz", 38_942)] {
            var delivered = 0
            var previous: Int64 = 0
            var ordered = true
            try GatewayFileReader(path: SharedFixtures.beaconRun(name)).forEach { sighting in
                delivered += 1
                if sighting.timeMilliseconds < previous - 5_000 { ordered = false }
                previous = max(previous, sighting.timeMilliseconds)
            }
            #expect(delivered == count, "\(name)")
            #expect(ordered, "\(name): times are roughly increasing")
        }
    }
}
