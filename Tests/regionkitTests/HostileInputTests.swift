import Foundation
import RegionKitTestSupport
import Testing

/// Malformed and hostile inputs thrown at the built `regionkit` as a new user would: damaged
/// recordings keep what they hold and exit 1 with counts and offsets, absurd numbers are refused
/// with the limit named, nothing traps (a trap is exit status 132/133/134 from SIGILL/SIGTRAP/SIGABRT).
@Suite("regionkit: hostile input (damaged recordings, absurd numbers, typos)")
struct HostileInputTests {
    static let uuid = "E2C56DB5DFFB48D2B060D0F5A71096E0"

    static func temporary(_ data: Data, suffix: String) throws -> String {
        let path = TestScratch.directory.appendingPathComponent("rk-hostile-\(UUID().uuidString)\(suffix)").path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func gzip(_ data: Data) throws -> Data {
        let input = try temporary(data, suffix: ".raw")
        defer { try? FileManager.default.removeItem(atPath: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n", input]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return output
    }

    /// One gateway sighting of beacon 1/minor, `time` in Unix epoch milliseconds.
    static func sighting(_ minor: Int, time: Int64) -> String {
        #"{"scannerID":"hall","uuid":"\#(uuid)","major":1,"minor":\#(minor),"calibratedPower":-59,"rssi":-60,"time":\#(time)}"#
    }

    static let region = "hall:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1"

    static func noTrap(_ result: CLI.Result) -> Bool { ![132, 133, 134, 139].contains(result.status) }

    @Test("A damaged gzip recording: the sightings before the damage are replayed, the damage reported, exit 1")
    func damagedGzip() async throws {
        let body = (0..<3000).map { Self.sighting(1, time: 1_600_000_000_000 + Int64($0) * 100) }.joined(separator: "\n")
        var compressed = [UInt8](try Self.gzip(Data(body.utf8)))
        let damage = compressed.count * 2 / 3
        for index in damage..<(damage + 32) { compressed[index] ^= 0xA5 }
        let path = try Self.temporary(Data(compressed), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--json", "--all-events", "--region", Self.region])
        #expect(result.status == 1, "\(result.stderr)")
        // The damage ends the replay without its tail: the sightings show as the room they put the beacon in.
        #expect(result.stdout.contains("didChangeNearestScanner"), "the intact part was replayed: \(result.stdout.prefix(300))")
        #expect(result.stderr.contains("regionkit: error: \(path): damaged gateway recording:") && result.stderr.contains("sighting(s) read"), "\(result.stderr)")
    }

    @Test("Trailing garbage after the last gzip member is ignored with a warning, as gzip -d does (exit 0)")
    func trailingGarbage() async throws {
        let body = (0..<50).map { Self.sighting(1, time: 1_600_000_000_000 + Int64($0) * 100) }.joined()
        let path = try Self.temporary(try Self.gzip(Data(body.utf8)) + Data("junk".utf8), suffix: ".json.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--json", "--region", Self.region])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("regionkit: warning: \(path): 4 byte(s) of trailing garbage"), "\(result.stderr)")
        #expect(result.stdout.contains(#""type":"didExitRegion""#))
    }

    @Test("An empty gateway recording (or one of blank lines) is an error, exit 1: it replayed nothing and exited 0 silently")
    func emptyRecording() async throws {
        for (contents, suffix) in [("", ".json"), ("\n \n", ".jsonl")] {
            let path = try Self.temporary(Data(contents.utf8), suffix: suffix)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try await CLI.run(["replay", path, "--instant", "--format", "gateway", "--region", Self.region])
            #expect(result.status == 1, "\(contents.debugDescription): \(result.stderr)")
            #expect(result.stderr.contains("\(path): no sightings in the recording"), "\(contents.debugDescription): \(result.stderr)")
        }
    }

    @Test("Far-apart and far-future gateway timestamps: rejected sightings counted, paced replay does not sleep for millennia",
          .timeLimit(.inProcess))
    func farApartTimes() async throws {
        let text = [Self.sighting(1, time: 1_600_000_000_000), Self.sighting(1, time: 9_223_372_036_854_775_807),
                    Self.sighting(1, time: 1_600_000_000_100), Self.sighting(1, time: 253_402_300_000_000)].joined()
        let path = try Self.temporary(Data(text.utf8), suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Paced at real time: the jump to the year 9999 waits at most --max-gap.
        let result = try await CLI.run(["replay", path, "--json", "--max-gap", "0.5", "--tail", "0", "--region", Self.region])
        #expect(Self.noTrap(result))
        #expect(result.status == 1, "one sighting out of range: \(result.stderr)")
        #expect(result.stderr.contains("1 damaged sighting(s)") && result.stderr.contains("time 9223372036854775807 outside"), "\(result.stderr)")
        #expect(result.stderr.contains("regionkit: note: \(path): 1 gap(s)"), "\(result.stderr)")
    }

    /// A btsnoop capture (datalink 1002) of `count` iBeacon advertising reports, one per second
    /// (record `index` at `second(index)` seconds).
    static func capture(count: Int, second: (Int) -> Int = { $0 }) -> (bytes: [UInt8], recordSize: Int) {
        var bytes: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1] + [0, 0, 0x03, 0xEA]   // magic, version 1, datalink 1002
        let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
        let ad: [UInt8] = [0x02, 0x01, 0x06,                           // flags
                           0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid  // Apple, iBeacon, UUID
                          + [0x00, 0x01, 0x00, 0x01, 0xC5]             // major 1, minor 1, power -59
        let event: [UInt8] = [0x04, 0x3E, UInt8(12 + ad.count),          // H4 event, LE Meta, parameter length
                              0x02, 0x01, 0x03, 0x00,                    // advertising report, 1 report, ADV_NONCONN_IND, public address
                              0x11, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(ad.count)] + ad + [0xC4]   // address, data length, data, rssi -60
        let epoch: Int64 = 0x00DC_DDB3_0F2F_8000 + 1_600_000_000_000_000
        for index in 0..<count {
            func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
            let time = UInt64(epoch + Int64(second(index)) * 1_000_000)
            bytes += be32(event.count) + be32(event.count) + be32(3) + be32(0)    // lengths, flags: received event, no drops
            bytes += (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * UInt64($0))) } + event
        }
        return (bytes, 24 + event.count)
    }

    @Test("One garbled btsnoop record: every later record is still replayed, the damage reported, exit 1")
    func garbledCapture() async throws {
        var (bytes, size) = Self.capture(count: 40)
        bytes[16 + 2 * size + 8] = 0x80                     // record 2: a flags bit btsnoop does not define
        let path = try Self.temporary(Data(bytes), suffix: ".btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--json", "--region", Self.region])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("replayed 39 record(s)") && result.stderr.contains("first at byte \(16 + 2 * size + 8) (record 2)"), "\(result.stderr)")
        #expect(result.stdout.contains(#""type":"didExitRegion""#))
    }

    @Test("A btsnoop capture with nothing to replay (its header only) is an error, as a gateway recording without sightings is (it exited 0)")
    func headerOnlyCapture() async throws {
        let header = Array(Self.capture(count: 0).bytes)
        #expect(header.count == 16, "magic, version 1, datalink 1002 (H4)")
        let path = try Self.temporary(Data(header), suffix: ".btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--json", "--region", Self.region])
        #expect(result.status == 1 && result.stderr.contains("\(path): no records in the btsnoop capture (its header only)"), "\(result.stderr)")
    }

    @Test("A btsnoop capture whose clock steps back: put back in order within --reorder-window, a longer step counted and said")
    func captureClockSteppingBack() async throws {
        // Records 20 and 21 swapped (one second back), and record 30 recorded at second 3.
        let swapped = Self.capture(count: 40) { $0 == 20 ? 21 : $0 == 21 ? 20 : $0 == 30 ? 3 : $0 }.bytes
        let path = try Self.temporary(Data(swapped), suffix: ".btsnoop")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--json", "--region", Self.region])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("\(path): 1 advertising report(s) recorded more than 2.0 s before one already replayed"), "\(result.stderr)")
        // The same events as the capture in order without record 30: an entry at 0 s, an exit after 39 s.
        let ordered = try Self.temporary(Data(Self.capture(count: 40) { $0 == 30 ? 29 : $0 }.bytes), suffix: ".btsnoop")
        defer { try? FileManager.default.removeItem(atPath: ordered) }
        let reference = try await CLI.run(["replay", ordered, "--instant", "--json", "--region", Self.region])
        #expect(reference.status == 0 && !reference.stderr.contains("stepped back"), "\(reference.stderr)")
        #expect(result.stdout == reference.stdout && result.stdout.contains(#""type":"didExitRegion""#), "\(result.stdout)\n\(reference.stdout)")
    }

    @Test("Invalid UTF-8 in a GPX element name is an error with line and column, not a trap")
    func gpxInvalidUTF8() async throws {
        var data = Data("<?xml version=\"1.0\"?>\n<gpx version=\"1.1\">\n<trk><".utf8)
        data += Data([0xC3, 0x28, 0xFF])
        data += Data(" lat=\"1\" lon=\"2\"/></trk></gpx>\n".utf8)
        let path = try Self.temporary(data, suffix: ".gpx")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["replay", path, "--instant", "--geofence", "g:1,2,100"])
        #expect(Self.noTrap(result))
        #expect(result.status == 1 && result.stderr.contains(path) && result.stderr.contains("invalid UTF-8"), "\(result.stderr)")
        #expect(result.stderr.contains("line 3"), "\(result.stderr)")
    }

    @Test("Absurd numbers are refused with the option, the value and the limit", arguments: [
        (["simulate", "museum", "--speed", "1e-300"], "--speed must be within 0.001...1000000"),
        (["simulate", "museum", "--speed", "1e300"], "--speed must be within 0.001...1000000"),
        (["demo", "--speed", "1e300"], "--speed must be within 0.001...1000000"),
        (["replay", "x.gpx", "--gpx-speed", "1e-300"], "--gpx-speed must be within 0.01...1000"),
        (["replay", "x.json", "--tail", "1e300"], "--tail must be within 0...86400"),
        (["replay", "x.json", "--max-gap=-1"], "--max-gap must be within 0...86400"),
        // A negative value written with a space is the value, refused by its range (it was "Missing value").
        (["replay", "x.json", "--max-gap", "-5"], "--max-gap must be within 0...86400"),
        (["simulate", "museum", "--speed", "-1"], "--speed must be within 0.001...1000000"),
        (["replay", "x.json", "--reorder-window", "-1"], "--reorder-window must be within 0...3600"),
        (["eval", "distance", "a.csv", "b.csv", "--filter", "median:1e4"], "--filter median:10000: window 10000.0 s must be within (0, 600] s"),
        (["eval", "detection", "--hours", "1e300"], "stationary hours 1e+300 must be within"),
        (["eval", "detection", "--departures", "9223372036854775807"], "departures 9223372036854775807 must be within"),
        (["eval", "detection", "--interval", "1e300", "--hours", "1", "--departures", "0"], "advertising interval 1e+300 s must be within 0.02...3600"),
        (["eval", "detection", "--burst-share", "1e300", "--shadowing", "none"], "burst share 1e+300 must be within 0...1"),
        (["eval", "detection", "--presence", "5...1"], "--presence '5...1': expected SECONDS or MIN...MAX with 0 < MIN ≤ MAX"),
        (["eval", "detection", "--presence", "nan"], "--presence 'nan': expected SECONDS or MIN...MAX"),
        (["eval", "detection", "--presence", "1e300"], "presence 1e+300...1e+300 s must be within"),
    ])
    func absurdNumbers(arguments: [String], expected: String) async throws {
        let result = try await CLI.run(arguments)
        #expect(Self.noTrap(result))
        #expect(result.status != 0)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
    }

    @Test("Scenario files: huge values and typos are errors naming the field and the limit")
    func scenarioFiles() async throws {
        let base = #"{"name": "x", "duration": DURATION, "beacons": [{"uuid": "\#(Self.uuid)", "major": 1, "minor": 1, "x": 0, "y": 0}], "path": [{"t": 0, "x": 0, "y": 0}], "regions": [], EXTRA}"#
        for (duration, extra, expected) in [
            ("1e9", #""seed": 1"#, "duration 1000000000.0 exceeds the maximum 604800 seconds"),
            ("5", #""radio": {"pathLossExponent": 2, "shadowingSigma": 1e300, "lossRate": 0, "sensitivity": -90}"#, "shadowingSigma 1e+300 must be within 0...50 dB"),
            ("5", #""geo": {"latitude": 0, "longitude": 0, "fixInterval": 1e-9}"#, "geo.fixInterval 1e-09 must be >= 0.01"),
            ("5", #""regoins": []"#, "unknown key 'regoins'"),
        ] {
            let path = try Self.temporary(Data(base.replacingOccurrences(of: "DURATION", with: duration).replacingOccurrences(of: "EXTRA", with: extra).utf8), suffix: ".json")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try await CLI.run(["simulate", path, "--instant", "--json"], timeout: 120)
            #expect(Self.noTrap(result))
            #expect(result.status == 1 && result.stderr.contains(path) && result.stderr.contains(expected), "\(result.stderr)")
        }
    }

    @Test("A region identifier given twice on the command line is an error naming both")
    func duplicateRegions() async throws {
        let result = try await CLI.run(["replay", "x.nmea", "--instant", "--geofence", "a:1,2,100", "--geofence", "a:3,4,100"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("region identifier 'a' is used twice: by --geofence 'a:1,2,100' and by --geofence 'a:3,4,100'"), "\(result.stderr)")
    }

    @Test("A device region given to replay or monitor (nothing they read names a device) is an error naming it, not a region that waits for ever")
    func deviceRegionsOutsideTheHub() async throws {
        for arguments in [["replay", "x.nmea", "--instant", "--region", "alice:device:irk:0123456789abcdef0123456789abcdef"],
                          ["monitor", "--hci", "tcp:127.0.0.1:9", "--region", "keys:device:c80f104dc7eb"]] {
            let result = try await CLI.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("--region '\(arguments[arguments.count - 1])': a device region") && result.stderr.contains("MQTT sources"), "\(result.stderr)")
        }
    }

    @Test("run --config: a typo in a key is an error with the file, line and column")
    func configTypo() async throws {
        let path = try Self.temporary(Data("sources:\n  - simulator: {scenario: museum}\nregoins:\n  - {identifier: x, uuid: \(Self.uuid)}\n".utf8), suffix: ".yaml")
        let store = TestScratch.directory.appendingPathComponent("rk-hostile-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: store) }
        let result = try await CLI.run(["run", "--config", path, "--store", store], timeout: 120)
        #expect(result.status == 1)
        #expect(result.stderr.contains("regionkit: error: \(path):3:1: regoins: unknown key 'regoins'"), "\(result.stderr)")
    }
}
