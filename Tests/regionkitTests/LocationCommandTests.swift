import Foundation
import RegionKitTestSupport
import Testing

/// The location paths of the CLI: replaying NMEA logs and GPX tracks through geofences, GeoJSON
/// region files, and `monitor --gpsd` argument checks. Real recordings from shared/fixtures.
@Suite("regionkit: location replay and region files")
struct LocationCommandTests {
    static let fixtures: URL = {
        if let path = ProcessInfo.processInfo.environment["REGIONKIT_FIXTURES"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()
    static var available: Bool { FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("gpsd/bt451.log").path) }

    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func summary(_ objects: [[String: Any]]) -> [String] {
        objects.map { "\($0["type"] as? String ?? "?"):\($0["region"] as? String ?? "-")" }
    }

    @Test("replay of gpsd's bt451.log (a car, ~1.9 km): exit the start geofence, enter the end one, nothing far away",
          .enabled(if: available, "fixtures not found (set REGIONKIT_FIXTURES): SKIPPED, not passed"))
    func replayNMEA() async throws {
        let log = Self.fixtures.appendingPathComponent("gpsd/bt451.log").path
        // Centres: the first and the last position gpsd reports for this log (bt451.log.chk).
        let result = try await CLI.run(["replay", log, "--instant", "--json",
                                        "--geofence", "start:55.797017833,23.569022,200",
                                        "--geofence", "end:55.780329167,23.578434,200",
                                        "--geofence", "far:55.9,23.9,300"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.summary(Self.objects(result.stdout))
        #expect(events.filter { $0 == "didExitRegion:start" }.count == 1)
        #expect(events.filter { $0 == "didEnterRegion:end" }.count == 1)
        #expect(!events.contains { $0.hasSuffix(":far") && !$0.hasPrefix("didStartMonitoring") })
        let exit = try #require(Self.objects(result.stdout).first { $0["type"] as? String == "didExitRegion" })
        #expect((exit["evidence"] as? [String: Any])?["dwell"] as? Double == 5, "responsive dwell")
    }

    @Test("Malformed NMEA lines are skipped with a warning (regionkit: warning: FILE: …), not reported as an error")
    func nmeaWarnings() async throws {
        let log = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).nmea")
        defer { try? FileManager.default.removeItem(at: log) }
        // NMEA 0183's own RMC example (checksum 6A), then a sentence whose checksum is wrong.
        try Data("$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A\r\n$GPRMC,123520,A,4807.038,N*00\r\n".utf8).write(to: log)
        let result = try await CLI.run(["replay", log.path, "--instant", "--format", "nmea", "--geofence", "x:48.1173,11.5167,100"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("regionkit: warning: \(log.path): "), "\(result.stderr)")
        #expect(!result.stderr.contains("error"), "\(result.stderr)")
    }

    @Test("NMEA fixes earlier than one already replayed (a day back) are said in a warning with their count; they were replayed silently")
    func nmeaFixesGoingBack() async throws {
        func rmc(_ time: String, _ date: String) -> String {
            let body = "GPRMC,\(time),A,4807.038,N,01131.000,E,022.4,084.4,\(date),003.1,W"
            let checksum = body.utf8.reduce(UInt8(0), ^)
            return "$\(body)*\(String(format: "%02X", checksum))\r\n"
        }
        let log = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).nmea")
        defer { try? FileManager.default.removeItem(at: log) }
        try Data((rmc("123519", "230394") + rmc("123520", "230394") + rmc("123521", "220394") + rmc("123522", "230394")).utf8).write(to: log)
        let result = try await CLI.run(["replay", log.path, "--instant", "--format", "nmea", "--geofence", "x:48.1173,11.5167,100"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("1 fix(es) earlier than one already replayed"), "\(result.stderr)")
    }

    @Test("An NMEA log without a date (GGA/GLL only: RMC and ZDA taken out of a real recording) is replayed timed by its time of day, with a warning; it was 'no position fixes'",
          .enabled(if: available, "fixtures not found (set REGIONKIT_FIXTURES): SKIPPED, not passed"))
    func undatedNMEA() async throws {
        let original = try String(contentsOf: Self.fixtures.appendingPathComponent("gpsd/bundg_zeus_9.log"), encoding: .utf8)
        let undated = original.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.dropFirst(3).hasPrefix("RMC") || $0.dropFirst(3).hasPrefix("ZDA")) }.joined(separator: "\n")
        #expect(undated.contains("GGA") && !undated.contains("RMC,"))
        let log = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).nmea")
        defer { try? FileManager.default.removeItem(at: log) }
        try Data(undated.utf8).write(to: log)
        // A circle the boat (52°51'N 5°18.8'E, heading south-west) leaves: an exit shows the fixes
        // were replayed with their times (the responsive profile's dwell is 5 s).
        let result = try await CLI.run(["replay", log.path, "--instant", "--format", "nmea", "--json", "--geofence", "start:52.85016,5.31362,60"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("no date in the recording"), "\(result.stderr)")
        #expect(!result.stderr.contains("no position fixes"), "\(result.stderr)")
        let events = Self.summary(Self.objects(result.stdout))
        #expect(events.contains("didExitRegion:start"), "\(events)")
    }

    @Test("replay of a GPX hike (no usable timestamps: timed at walking speed) through a GeoJSON region file",
          .enabled(if: available, "fixtures not found (set REGIONKIT_FIXTURES): SKIPPED, not passed"))
    func replayGPXWithGeoJSON() async throws {
        let gpx = Self.fixtures.appendingPathComponent("gpx/Mojstrovka.gpx").path
        let regions = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).geojson")
        defer { try? FileManager.default.removeItem(at: regions) }
        // A circle around the summit part of the track (its middle point) and one 50 km away.
        try Data("""
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.741512, 46.43143]}, "properties": {"identifier": "summit", "radius": 150}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.3, 46.1]}, "properties": {"identifier": "ljubljana", "radius": 500}}
        ]}
        """.utf8).write(to: regions)
        let result = try await CLI.run(["replay", gpx, "--instant", "--json", "--regions", regions.path])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.summary(Self.objects(result.stdout))
        #expect(events.contains("didStartMonitoring:summit") && events.contains("didStartMonitoring:ljubljana"))
        #expect(events.contains("didEnterRegion:summit"), "\(events)")
        #expect(!events.contains("didEnterRegion:ljubljana"))
    }

    @Test("Bad region files and arguments: clear errors naming what and where")
    func errors() async throws {
        let bad = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).geojson")
        defer { try? FileManager.default.removeItem(at: bad) }
        try Data(#"{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.7, 46.4]}, "properties": {"identifier": "x"}}]}"#.utf8).write(to: bad)
        let missingRadius = try await CLI.run(["replay", "x.nmea", "--instant", "--regions", bad.path])
        #expect(missingRadius.status == 1)
        #expect(missingRadius.stderr.contains(bad.path) && missingRadius.stderr.contains("radius"), "\(missingRadius.stderr)")
        // A regions file (the scenario's format) with a key given twice: refused with where (the decoder kept the first value).
        let twice = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: twice) }
        try Data("{\"regions\": [\n  {\"identifier\": \"park\", \"latitude\": 46.4, \"longitude\": 13.7, \"radius\": 50, \"radius\": 5000}\n]}".utf8).write(to: twice)
        let duplicate = try await CLI.run(["replay", "x.nmea", "--instant", "--regions", twice.path])
        #expect(duplicate.status == 1 && duplicate.stderr.contains("\(twice.path):2:"), "\(duplicate.stderr)")
        #expect(duplicate.stderr.contains("'radius' is given twice in one object"), "\(duplicate.stderr)")
        let geofence = try await CLI.run(["replay", "x.nmea", "--geofence", "park:46.4,abc,100"])
        #expect(geofence.status == 1 && geofence.stderr.contains("longitude 'abc'"), "\(geofence.stderr)")
        let noSource = try await CLI.run(["monitor", "--geofence", "park:46.4,13.7,100"])
        #expect(noSource.status != 0 && noSource.stderr.contains("--gpsd"), "\(noSource.stderr)")
        let badPort = try await CLI.run(["monitor", "--gpsd", "127.0.0.1:99999", "--geofence", "park:46.4,13.7,100"])
        #expect(badPort.status == 1 && badPort.stderr.contains("port '99999'"), "\(badPort.stderr)")
    }

    @Test("An undated NMEA log that crosses midnight keeps its times increasing: the exit after 00:00 is at its time, not lost")
    func undatedNMEAPastMidnight() async throws {
        // GGA only (no date), one fix a second from 23:59:50 to 00:00:30, moving east 10 m a second
        // from the centre of a 50 m circle: out of it (and the boundary buffer) after midnight.
        func sentence(_ body: String) -> String {
            let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
            return "$" + body + "*" + String(format: "%02X", sum) + "\r\n"
        }
        var log = ""
        for step in 0...40 {
            let seconds = (23 * 3600 + 59 * 60 + 50 + step) % 86_400
            let time = String(format: "%02d%02d%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
            // 10 m east a second at 46.4°N: 10 / (111,320 · cos 46.4°) degrees of longitude.
            let metresPerDegree: Double = 111_320 * cos(46.4 * Double.pi / 180)
            let longitude: Double = 13.7 + Double(step) * 10 / metresPerDegree
            let minutes = (longitude - 13) * 60
            log += sentence("GPGGA,\(time),4624.0000,N,013\(String(format: "%07.4f", minutes)),E,1,08,0.9,500.0,M,46.9,M,,")
        }
        let path = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).nmea")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data(log.utf8).write(to: path)
        let result = try await CLI.run(["replay", path.path, "--instant", "--format", "nmea", "--json", "--geofence", "home:46.4,13.7,50"])
        #expect(result.status == 0, "\(result.stderr)")
        let exit = try #require(Self.objects(result.stdout).first { $0["type"] as? String == "didExitRegion" }, "\(result.stdout)")
        // At its time: the boat is t × 10 m from the centre then. Without the rollover every fix
        // after midnight was timed before the first and fed at the clock's time: the exit came
        // from the last fix, 400 m out.
        let t = try #require(exit["t"] as? Double), distance = try #require((exit["evidence"] as? [String: Any])?["distance"] as? Double)
        #expect(t > 10 && abs(distance - t * 10) < 30, "the exit after midnight at its time and place: \(exit)")
    }

    @Test("replay --request-state: a region the recording starts inside is determined inside at once (without it, only its later exit shows)",
          .enabled(if: available, "fixtures not found (set REGIONKIT_FIXTURES): SKIPPED, not passed"))
    func replayRequestsState() async throws {
        let recording = Self.fixtures.appendingPathComponent("beacon-runs/FourScannersBeacon5Run1-2015-03-13.json.gz").path
        let region = "r5:DAF246CE-8363-11E4-B116-123B93F75CBA:0:5"
        let plain = Self.objects(try await CLI.run(["replay", recording, "--region", region, "--instant", "--json"]).stdout)
        #expect(!plain.contains { $0["type"] as? String == "didDetermineState" && $0["t"] as? Double == 0 })
        let asked = try await CLI.run(["replay", recording, "--region", region, "--instant", "--json", "--request-state"])
        #expect(asked.status == 0, "\(asked.stderr)")
        let first = Self.objects(asked.stdout).first { $0["type"] as? String == "didDetermineState" }
        #expect(first?["state"] as? String == "inside" && first?["t"] as? Double == 0, "\(String(describing: first))")
    }

    @Test("monitor --gpsd: its circles, registered before gpsd answered, wait for it in the engine: the first event is didStartMonitoring, not a monitoringDidFail 'notDetermined'")
    func monitorWaitsForGPSD() async throws {
        let version = #"{"class":"VERSION","release":"3.25","rev":"3.25","proto_major":3,"proto_minor":15}"#
        let tpv = #"{"class":"TPV","mode":3,"time":"2026-12-01T10:00:00.000Z","lat":46.4,"lon":13.7,"eph":5}"#
        let server = try FakeGPSDServer(scripts: [[version, tpv, tpv, tpv]])
        let result = try await CLI.run(["monitor", "--gpsd", "127.0.0.1:\(server.port)", "--geofence", "park:46.4,13.7,100", "--json", "--duration", "1.5"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.summary(Self.objects(result.stdout))
        #expect(events.first == "didStartMonitoring:park", "\(events)")
    }

    @Test("monitor --gpsd says a line gpsd sent that does not decode, once per kind, with its line number (they were dropped without a word); the fixes around it still count")
    func monitorSaysUndecodableGPSDLines() async throws {
        let version = #"{"class":"VERSION","release":"3.25","rev":"3.25","proto_major":3,"proto_minor":15}"#
        let tpv = #"{"class":"TPV","mode":3,"time":"2026-12-01T10:00:00.000Z","lat":46.4,"lon":13.7,"eph":5}"#
        let server = try FakeGPSDServer(scripts: [[version, "{not json", tpv, "{still not", tpv, tpv]])
        let result = try await CLI.run(["monitor", "--gpsd", "127.0.0.1:\(server.port)", "--geofence", "park:46.4,13.7,100", "--json", "--duration", "1.5"])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("gpsd sent a line that does not decode") }
        #expect(warnings.count == 1 && warnings[0].contains("line 2: malformedJSON"), "\(result.stderr)")
        #expect(Self.objects(result.stdout).contains { $0["type"] as? String == "didDetermineState" && $0["state"] as? String == "inside" }, "\(result.stdout)")
    }

    @Test("regions convert: GeoJSON → scenario JSON → GeoJSON keeps every circle")
    func convertRoundTrip() async throws {
        let source = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).geojson")
        let middle = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: source); try? FileManager.default.removeItem(at: middle) }
        try Data("""
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [139.7671, 35.6812]}, "properties": {"identifier": "station", "radius": 150}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-0.1276, 51.5072]}, "properties": {"identifier": "london", "radius": 2000, "notifyOnExit": false}}
        ]}
        """.utf8).write(to: source)
        let json = try await CLI.run(["regions", "convert", source.path, "--to", "json"])
        #expect(json.status == 0, "\(json.stderr)")
        try Data(json.stdout.utf8).write(to: middle)
        let back = try await CLI.run(["regions", "convert", middle.path, "--to", "geojson"])
        #expect(back.status == 0, "\(back.stderr)")
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(back.stdout.utf8)) as? [String: Any])
        let features = try #require(collection["features"] as? [[String: Any]])
        #expect(features.count == 2)
        let london = try #require(features.first { (($0["properties"] as? [String: Any])?["identifier"] as? String) == "london" })
        let properties = try #require(london["properties"] as? [String: Any])
        #expect(properties["radius"] as? Double == 2000)
        #expect((london["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [-0.1276, 51.5072])
    }

    @Test("regions convert: beacon regions of every format are written with their format's fields and read back as the same regions (AltBeacon and Eddystone were written as iBeacons)")
    func convertBeaconFormats() async throws {
        let source = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).json")
        let middle = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: source); try? FileManager.default.removeItem(at: middle) }
        try Data("""
        {"regions": [
          {"identifier": "lobby", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1},
          {"identifier": "hall", "format": "altbeacon", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2},
          {"identifier": "shop", "format": "eddystone-uid", "namespace": "8b0ca750e7a74e14bd99"},
          {"identifier": "shelf", "namespace": "8b0ca750e7a74e14bd99", "instance": "0000000000a1"},
          {"identifier": "alice", "device": "irk:0123456789abcdef0123456789abcdef", "notifyOnEntry": false}
        ]}
        """.utf8).write(to: source)
        let first = try await CLI.run(["regions", "convert", source.path, "--to", "json"])
        #expect(first.status == 0, "\(first.stderr)")
        try Data(first.stdout.utf8).write(to: middle)
        let second = try await CLI.run(["regions", "convert", middle.path, "--to", "json"])
        #expect(second.status == 0 && second.stdout == first.stdout, "\(second.stderr)")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let regions = try #require(written["regions"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: regions.compactMap { region in (region["identifier"] as? String).map { ($0, region) } })
        #expect(byID["hall"]?["format"] as? String == "altbeacon" && byID["hall"]?["minor"] as? Int == 2)
        #expect(byID["shop"]?["namespace"] as? String == "8b0ca750e7a74e14bd99" && byID["shop"]?["instance"] == nil && byID["shop"]?["uuid"] == nil)
        #expect(byID["shelf"]?["instance"] as? String == "0000000000a1")
        #expect(byID["alice"]?["device"] as? String == "irk:0123456789abcdef0123456789abcdef" && byID["alice"]?["notifyOnEntry"] as? Bool == false)
        #expect(byID["lobby"]?["format"] == nil && byID["lobby"]?["major"] as? Int == 1 && byID["lobby"]?["minor"] == nil)
    }
}
