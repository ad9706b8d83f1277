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

    @Test("A stream that is not a regular file and gives no sighting (/dev/zero, /dev/urandom: they have no end) is stopped after maximumBytesWithoutObject, naming why; a regular file of the same noise is read to its end (it was read for ever)",
          .timeLimit(.inProcess))
    func endlessNoiseStops() throws {
        var reader = GatewayFileReader(path: "/dev/zero")
        reader.maximumBytesWithoutObject = 1 << 20
        var delivered = 0
        let report = try reader.read { _ in delivered += 1 }
        #expect(delivered == 0)
        let message = report.stoppedBy?.message ?? ""
        #expect(message.hasPrefix("/dev/zero: 1 MiB read without a sighting") && message.contains("a device may not end: stopped"), "\(message)")
        // Random bytes balance braces now and then (an "object" every kilobyte or so): none decodes.
        var random = GatewayFileReader(path: "/dev/urandom")
        random.maximumBytesWithoutObject = 1 << 20
        let noise = try random.read { _ in delivered += 1 }
        #expect(delivered == 0 && noise.stoppedBy?.message.contains("1 MiB read without a sighting") == true, "\(String(describing: noise.stoppedBy))")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("regionkit-zeros-\(UUID()).json").path
        let sighting = #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2,"rssi":-60,"time":1700000000000,"scannerID":"hall"}"#
        try (Data(count: 2 << 20) + Data(sighting.utf8)).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        var regular = GatewayFileReader(path: file)
        regular.maximumBytesWithoutObject = 1 << 20
        let read = try regular.read { _ in delivered += 1 }
        #expect(read.stoppedBy == nil && delivered == 1 && read.skippedBytes == 2 << 20, "the sighting after 2 MiB of noise: \(String(describing: read.stoppedBy))")
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

    @Test func garbageBetweenObjectsIsRejectedWithItsOffset() throws {
        let message = "run.json: unexpected byte 0x78 ('x') at offset 8 between JSON objects"
        // Damage first in its chunk: the feed throws.
        var first = ConcatenatedJSONSplitter(source: "run.json")
        _ = try first.feed(Array(#"{"a":1} "#.utf8))
        #expect { _ = try first.feed(Array(#"x{"b":2}"#.utf8)) } throws: { ($0 as? RegionKitError)?.message == message }
        // Damage after an object completed in the same chunk: the object is returned (fed in one
        // piece or in many, the same objects: the gateway-json fuzz finding), then the error comes
        // from the next feed and from finish.
        var splitter = ConcatenatedJSONSplitter(source: "run.json")
        let objects = try splitter.feed(Array(#"{"a":1} x{"b":2}"#.utf8))
        #expect(objects.map(\.bytes) == [Array(#"{"a":1}"#.utf8)])
        #expect(splitter.failure?.message == message)
        #expect { _ = try splitter.feed(Array("{}".utf8)) } throws: { ($0 as? RegionKitError)?.message == message }
        #expect { try splitter.finish() } throws: { ($0 as? RegionKitError)?.message == message }
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
        // Foundation says only "The given data was not valid JSON." for these three:
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 1.5, "minor": 1, "rssi": -70, "time": 1}"#, "field 'major' is 1.5, not an integer"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 0, "minor": 1, "rssi": -70, "time": 1e30}"#, "field 'time' is a number beyond any 64-bit integer"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 0, "minor": 1, "rssi": -70 "time": 1}"#, "invalid JSON: expected ',' or '}' at byte 99"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 70000, "minor": 1, "rssi": -70, "time": 1}"#, "outside 0...65535"),
        (#"{"scannerID": "R", "uuid": "DAF246CE836311E4B116123B93F75CBA", "major": 0, "minor": 1, "rssi": -70}"#, "missing integer field 'time'"),
        // An untrusted value is repeated cut to 80 characters (a 50 KB uuid made a 50 KB error line).
        (#"{"scannerID": "R", "uuid": ""# + String(repeating: "x", count: 50_000) + #"", "major": 0, "minor": 1, "rssi": -70, "time": 1}"#,
         "uuid '" + String(repeating: "x", count: 80) + "…' is not 32 hex digits"),
    ])
    func badSightings(json: String, expected: String) {
        #expect {
            _ = try GatewaySighting(json: Array(json.utf8), offset: 1234, source: "run.json")
        } throws: { error in
            let message = (error as? RegionKitError)?.message ?? ""
            return message.hasPrefix("run.json: sighting at offset 1234: ") && message.contains(expected)
        }
    }

    @Test("A recording that cannot be opened is named with why: a directory, a missing file")
    func unreadableRecordingsSayWhy() {
        for (path, why) in [(TestScratch.directory.path, "it is a directory"), ("/nonexistent/run.json.gz", "no such file")] {
            let error = #expect(throws: RegionKitError.self) { _ = try GatewayFileReader(path: path).read { _ in } }
            #expect(error?.message == "\(path): cannot open the gateway recording: \(why)")
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
            let expected: [Int64] = (0..<800).map { (index: Int) -> Int64 in 1000 + Int64(index) * 100 }
            #expect(times == expected)
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

    // MARK: Damage keeps what was read and reports what was skipped

    @Test func aDamagedGzipMemberKeepsEverySightingDecompressedBeforeTheDamage() throws {
        // 4000 sightings of ~200 bytes: ~800 KB decompressed, one 1 MB read chunk holds the whole
        // file, so before the fix the damaged chunk's decompressed output was thrown away entirely.
        let body = (0..<4000).map { Self.sighting($0 % 4, time: Int64($0) * 100, rssi: -40 - $0 % 50) }.joined()
        var compressed = [UInt8](try Fixtures.gzip(Data(body.utf8)))
        let damage = compressed.count / 2
        for index in damage..<(damage + 64) { compressed[index] ^= 0x5A }
        let path = try Fixtures.temporaryFile(Data(compressed), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var reader = GatewayFileReader(path: path)
        reader.chunkSize = 1 << 20
        var times: [Int64] = []
        let report = try reader.read { times.append($0.timeMilliseconds) }
        #expect(times.count > 1000, "kept \(times.count) sightings decompressed before the damage")
        // The first 1000 are exactly the file's (the damaged stretch may still inflate to something).
        let fromTheFile: [Int64] = (0..<1000).map { (index: Int) -> Int64 in Int64(index) * 100 }
        #expect(Array(times.prefix(1000)) == fromTheFile, "in order, from the start")
        #expect(report.sightings == times.count)
        #expect(report.lostData)
        let stop = try #require(report.stoppedBy)
        #expect(stop.message.contains(path) && (stop.message.contains("corrupt gzip data near compressed byte") || stop.message.contains("truncated")))
        let error = try #require(report.error(path: path))
        #expect(error.message.contains("\(times.count) sighting(s) read") && error.message.contains("reading stopped early"))
    }

    @Test func trailingGarbageAfterTheLastMemberIsIgnoredLikeGzipDoes() throws {
        let body = (0..<300).map { Self.sighting($0 % 4, time: Int64($0) * 100) }.joined()
        // gzip -d: "decompression OK, trailing garbage ignored"; zero padding is ignored silently.
        for (tail, garbage) in [(Array("garbage\n".utf8), true), ([UInt8](repeating: 0, count: 512), false), ([0x1F], true)] {
            let path = try Fixtures.temporaryFile(try Fixtures.gzip(Data(body.utf8)) + Data(tail), suffix: ".json.gz")
            defer { try? FileManager.default.removeItem(atPath: path) }
            for chunk in [1, 7, 256 * 1024] {
                var reader = GatewayFileReader(path: path)
                reader.chunkSize = chunk
                let report = try reader.read { _ in }
                #expect(report.sightings == 300, "chunk \(chunk)")
                #expect(!report.lostData, "\(report.summary)")
                #expect(report.trailingBytes == tail.count && report.trailingIsGarbage == garbage)
                #expect(report.warnings.isEmpty == !garbage)
                #expect(try reader.forEach { _ in } == 300, "not fatal")
            }
        }
    }

    @Test func damagedSightingsAndGarbageAreSkippedCountedAndLocated() throws {
        let good = (0..<10).map { Self.sighting($0, time: 1000 + Int64($0)) }
        // Object 3 has an out-of-range rssi, object 6 a bad uuid; "xx" is garbage between objects.
        var parts = good
        parts[3] = #"{"scannerID":"R","uuid":"DAF246CE836311E4B116123B93F75CBA","major":0,"minor":3,"rssi":900,"time":1003}"#
        parts[6] = #"{"scannerID":"R","uuid":"nope","major":0,"minor":6,"rssi":-60,"time":1006}"#
        let text = parts[0..<5].joined() + "xx" + parts[5...].joined()
        let offset3 = parts[0..<3].joined().utf8.count
        let path = try Fixtures.temporaryFile(Data(text.utf8), suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var minors: [UInt16] = []
        let report = try GatewayFileReader(path: path).read { minors.append($0.identity.minor) }
        #expect(minors == [0, 1, 2, 4, 5, 7, 8, 9], "the sightings after each damage are kept")
        #expect(report.skippedSightings == 2 && report.skippedBytes == 2)
        #expect(report.firstSkipOffset == offset3)
        #expect(report.firstSkip?.message.contains("sighting at offset \(offset3)") == true)
        #expect(report.stoppedBy == nil && report.lostData)
        #expect { try GatewayFileReader(path: path).forEach { _ in } } throws: { error in
            let message = (error as? RegionKitError)?.message ?? ""
            return message.contains("8 sighting(s) read") && message.contains("2 damaged sighting(s)") && message.contains("2 byte(s)")
        }
    }

    @Test func farApartTimesAreRejectedOrSubtractedWithoutOverflow() throws {
        // Int64.max ms is past the year 9999: rejected with the field and range.
        #expect {
            _ = try GatewaySighting(json: Array(Self.sighting(1, time: .max).utf8), offset: 0, source: "x")
        } throws: { ($0 as? RegionKitError)?.message.contains("time 9223372036854775807 outside 0...") == true }
        // The subtraction itself never traps, whatever the origin.
        let sighting = try GatewaySighting(json: Array(Self.sighting(1, time: 253_402_300_799_999).utf8), offset: 0, source: "x")
        #expect(sighting.observation(originMilliseconds: .min).timestamp.seconds > 9e15)
        #expect(GatewaySighting.seconds(from: .max, to: .min) < 0)
        let recording = GatewayRecording(fileOrder: [sighting, try GatewaySighting(json: Array(Self.sighting(2, time: 0).utf8), offset: 0, source: "x")], path: "x")
        #expect(recording.duration == 253_402_300_799.999)
    }

    /// Found by the hostile-input review: every `}` after the broken string counted as inside a
    /// string, and the rest of the file was one oversized object, skipped (0 of 39,802 read).
    /// Compact (the recording without its line breaks and indentation), no line break ends the
    /// broken string: the byte after its early close does (0 read before that was caught).
    @Test("A real recording with one closing quote deleted (its first and one 500 KB in) loses that sighting alone, reported as damage at its offset",
          .enabled(if: SharedFixtures.available, SharedFixtures.skipMessage), arguments: ["pretty-printed", "compact"])
    func missingQuoteLosesOneSighting(layout: String) throws {
        var text = try Self.decompressedFixture()
        if layout == "compact" {
            // No string in it holds a space or a line break (scanner names, hex UUIDs).
            text.removeAll { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: " ") }
            #expect(Self.firstIndex(of: Array("}{".utf8), in: text) != nil)
        }
        let expected = layout == "compact" ? "is followed by byte 0x75 ('u')" : "inside a string at offset"
        for start in [0, 500_000] {
            var damaged = text
            let room = Array(#""Room202""#.utf8)
            let found = try #require(Self.firstIndex(of: room, in: damaged, from: start))
            damaged.remove(at: found + room.count - 1)   // the closing quote
            let path = try Fixtures.temporaryFile(Data(damaged), suffix: ".json")
            var read = 0
            let report = try GatewayFileReader(path: path).read { _ in read += 1 }
            #expect(read == 39_801, "quote deleted at \(found + room.count - 1): \(read) read")
            #expect(report.firstSkip?.message.contains(expected) == true, "\(report.firstSkip?.message ?? "no skip")")
            #expect(report.firstSkipOffset.map { $0 < found && found - $0 < 400 } == true, "the damaged sighting's start: \(report.firstSkipOffset ?? -1)")
        }
    }

    /// The two-scanner recording, decompressed.
    static func decompressedFixture() throws -> [UInt8] {
        let compressed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: SharedFixtures.beaconRun("TwoScannersRun1-2015-03-03.json.gz"))))
        let inflater = try GzipInflater(source: "fixture")
        let text = try inflater.inflate(compressed)
        try inflater.finish()
        return text
    }

    /// Where `pattern` first occurs in `bytes` at or after `start`.
    static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int = 0) -> Int? {
        (start..<(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    @Test("A real recording whose first sighting's time has a flipped bit (years off): that sighting is left out with a warning, and the others keep their times from the next one (the whole recording collapsed into seconds)",
          .enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
    func damagedFirstTimestamp() throws {
        var text = try Self.decompressedFixture()
        let key = Array(#""time":"#.utf8)
        var intact: [GatewaySighting] = []
        _ = try GatewayFileReader(path: SharedFixtures.beaconRun("TwoScannersRun1-2015-03-03.json.gz")).read { intact.append($0) }
        let found = try #require(Self.firstIndex(of: key, in: text))
        var digit = found + key.count
        while text[digit] == UInt8(ascii: " ") { digit += 1 }
        text[digit] = text[digit] == UInt8(ascii: "4") ? UInt8(ascii: "9") : UInt8(ascii: "4")   // the leading digit: years off
        let path = try Fixtures.temporaryFile(Data(text), suffix: ".json")
        var read: [GatewaySighting] = []
        let report = try GatewayFileReader(path: path).read { read.append($0) }
        #expect(read.count == intact.count - 1 && report.timeOutliers == 1 && report.skippedSightings == 0)
        #expect(read.map(\.timeMilliseconds) == intact.dropFirst().map(\.timeMilliseconds))
        #expect(report.warnings.first?.contains("1 sighting(s) left out: their time is over a day from the sightings around them") == true
                && report.warnings.first?.contains("the sighting at offset 0") == true, "\(report.warnings)")
        #expect(report.error(path: path) == nil, "a warning, not damage: a lone sighting beyond a long gap looks the same")
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
