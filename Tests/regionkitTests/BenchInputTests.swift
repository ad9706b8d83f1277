import Foundation
import RegionKitTestSupport
import Testing

/// The input readers of `regionkit bench parse` (a file of HCI LE Advertising Report events) and
/// `regionkit bench geofence` (regions and fixes CSV): good files give the expected counts,
/// malformed ones a clear error naming the place, never a crash.
@Suite("regionkit bench: input files")
struct BenchInputTests {
    /// One LE Advertising Report event (one report) carrying `data`.
    static func event(_ data: [UInt8], eventType: UInt8 = 0x03, rssi: Int8 = -60) -> [UInt8] {
        let parameters: [UInt8] = [0x02, 0x01, eventType, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xC6, UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func iBeacon(major: UInt16, minor: UInt16) -> [UInt8] {
        let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
        return [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    }

    static func write(_ bytes: [UInt8], suffix: String = "hci") throws -> String {
        let url = TestScratch.directory.appendingPathComponent("rk-bench-\(UUID().uuidString).\(suffix)")
        try Data(bytes).write(to: url)
        return url.path
    }

    @Test("bench parse counts the iBeacons of a well-formed file and sums major + minor")
    func parsesReports() async throws {
        let name: [UInt8] = [0x05, 0x09, 0x52, 0x6F, 0x6F, 0x6D]   // Complete Local Name "Room"
        let bytes = Self.event(Self.iBeacon(major: 1, minor: 7)) + Self.event(name, eventType: 0x04) + Self.event(Self.iBeacon(major: 2, minor: 30))
        let path = try Self.write(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["bench", "parse", "--reports", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["reports"] as? Int == 3)
        #expect(object["ibeacons"] as? Int == 2)
        #expect(object["checksum"] as? Int == 1 + 7 + 2 + 30)
        #expect(object["observations"] as? Int == 2)
        #expect(object["malformed"] as? Int == 0)
        #expect(object["regions_inside"] as? Int == object["regions"] as? Int, "every region built from the fleet was sighted")
    }

    @Test("a truncated last event is reported with its offset and index")
    func truncatedEvent() async throws {
        let good = Self.event(Self.iBeacon(major: 1, minor: 1))
        let path = try Self.write(good + Array(Self.event(Self.iBeacon(major: 1, minor: 2)).prefix(20)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["bench", "parse", "--reports", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path): offset \(good.count): event 1 declares 42 parameter byte(s) but only 18 remain"), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test("an event that is not an LE Advertising Report, and an empty file, are named")
    func wrongEvents() async throws {
        let commandComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let wrongCode = try Self.write(Self.event(Self.iBeacon(major: 1, minor: 1)) + commandComplete)
        let empty = try Self.write([])
        defer { for path in [wrongCode, empty] { try? FileManager.default.removeItem(atPath: path) } }
        let code = try await CLI.run(["bench", "parse", "--reports", wrongCode])
        #expect(code.status == 1)
        #expect(code.stderr.contains("offset 44: event 1 has event code 0x0E, expected 0x3E"), "\(code.stderr)")
        let none = try await CLI.run(["bench", "parse", "--reports", empty])
        #expect(none.status == 1)
        #expect(none.stderr.contains("the reports file is empty"), "\(none.stderr)")
        let missing = try await CLI.run(["bench", "parse", "--reports", "/nonexistent/reports.hci"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/reports.hci: cannot read the reports file"), "\(missing.stderr)")
    }

    @Test("bench geofence names the file, line and field of a malformed row")
    func malformedGeofenceCSV() async throws {
        let regions = try Self.write(Array("id,latitude,longitude,radius\n1,48.5,9.0,100\n2,48.6,nine,100\n".utf8), suffix: "csv")
        let fixes = try Self.write(Array("id,time,latitude,longitude,accuracy\n1,1,48.5,9.0,10\n2,2,48.5,9.0,10\n".utf8), suffix: "csv")
        defer { for path in [regions, fixes] { try? FileManager.default.removeItem(atPath: path) } }
        let result = try await CLI.run(["bench", "geofence", "--regions", regions, "--fixes", fixes])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(regions):3: longitude 'nine' is not a finite number"), "\(result.stderr)")
    }

    @Test("bench geofence finds the containing regions of each fix")
    func geofenceCounts() async throws {
        // Region 1 (100 m) contains fix 1 (at its centre); region 2 (1 km, ~0.5 km east) contains
        // both fixes; fix 2 is ~900 m from region 1's centre.
        let regions = try Self.write(Array("id,latitude,longitude,radius\n1,48.5,9.0,100\n2,48.5,9.0068,1000\n".utf8), suffix: "csv")
        let fixes = try Self.write(Array("id,time,latitude,longitude,accuracy\n1,1,48.5,9.0,10\n2,2,48.5,9.0122,10\n".utf8), suffix: "csv")
        defer { for path in [regions, fixes] { try? FileManager.default.removeItem(atPath: path) } }
        let result = try await CLI.run(["bench", "geofence", "--regions", regions, "--fixes", fixes, "--json", "--min-seconds", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["pairs"] as? Int == 3)
        #expect(object["fixes_with_hits"] as? Int == 2)
        #expect(object["checksum"] as? Int == (1 * 1_000_003 + 1) + (1 * 1_000_003 + 2) + (2 * 1_000_003 + 2))
        #expect(object["first_fix_inside"] as? Int == 2)
        #expect(object["first_fix_index_inside"] as? Int == 2)
    }

    @Test("bench beacons lists the same reports both ways (it exits 1 when they differ) and names a bad option")
    func beaconListing() async throws {
        let result = try await CLI.run(["bench", "beacons", "--beacons", "3000", "--limit", "25", "--repeats", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["beacons"] as? Int == 3000 && object["limit"] as? Int == 25)
        #expect((object["most_recent_ms_best"] as? Double ?? -1) > 0 && (object["all_then_cut_ms_best"] as? Double ?? -1) > 0)
        let bad = try await CLI.run(["bench", "beacons", "--limit", "0"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--limit must be within 1...100000"), "\(bad.stderr)")
    }

    @Test("bench scanners places every beacon, counts the rooms the same both ways and lists every scanner (it exits 1 otherwise), and names a bad option")
    func scannerListing() async throws {
        let result = try await CLI.run(["bench", "scanners", "--beacons", "3000", "--scanners", "7", "--repeats", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["beacons"] as? Int == 3000 && object["scanners"] as? Int == 7)
        for key in ["counts_from_dictionary_ms_best", "counts_in_place_ms_best", "listing_ms_best"] {
            #expect((object[key] as? Double ?? -1) > 0, "\(key): \(result.stdout)")
        }
        let bad = try await CLI.run(["bench", "scanners", "--scanners", "70000"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--scanners must be within 1...65536"), "\(bad.stderr)")
        let unheard = try await CLI.run(["bench", "scanners", "--beacons", "50", "--scanners", "100"])
        #expect(unheard.status != 0)
        #expect(unheard.stderr.contains("--scanners (100) must not exceed --beacons (50)"), "\(unheard.stderr)")
    }
}
