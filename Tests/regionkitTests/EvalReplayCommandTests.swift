import Foundation
import RegionKitTestSupport
import Testing

/// `regionkit eval replay` as a user runs it: JSON lines per recording × profile, clear errors
/// for missing or damaged files and unknown profiles.
@Suite("regionkit eval replay")
struct EvalReplayCommandTests {
    /// A small gateway recording: one beacon at one scanner, 10 Hz for 20 s.
    static func recording() throws -> String {
        var text = ""
        for tenth in 0..<200 {
            text += """
            {"scannerID": "Room1", "uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 7, "minor": 9,
             "calibratedPower": -59, "rssi": -61, "messageType": 0, "time": \(1_425_757_567_000 + tenth * 100)}

            """
        }
        let url = TestScratch.directory.appendingPathComponent("rk-eval-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("--json: one object per line per file × profile, with the measures and the stream's rate")
    func jsonLines() async throws {
        let file = try Self.recording()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try await CLI.run(["eval", "replay", file, "--profile", "corelocation", "--profile", "responsive", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.map { $0["profile"] as? String } == ["corelocation", "responsive"])
        for object in objects {
            #expect(object["recording"] as? String == (file as NSString).lastPathComponent)
            #expect(object["sightings"] as? Int == 200)
            #expect(object["false_exits"] is NSNull, "no ground truth for this file")
            let streams = try #require(object["streams"] as? [[String: Any]])
            #expect(streams.count == 1)
            #expect(streams.first?["class"] as? String == "10Hz")
            #expect(abs((streams.first?["rate_hz"] as? Double ?? 0) - 10) < 0.01)
            let latency = try #require((object["exit_latency"] as? [String: Any])?["10Hz"] as? [String: Any])
            #expect(latency["ends"] as? Int == 1 && latency["missed"] as? Int == 0)
        }
        // Core Location's exit is 30–40 s after the last sighting, responsive's far sooner.
        let latencies = objects.compactMap { (($0["exit_latency"] as? [String: Any])?["10Hz"] as? [String: Any])?["p50_s"] as? Double }
        #expect(latencies.count == 2)
        #expect(latencies[0] >= 30 && latencies[0] <= 40)
        #expect(latencies[1] < latencies[0])
    }

    @Test("The default output is a table with a column per profile and the stream list")
    func table() async throws {
        let file = try Self.recording()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try await CLI.run(["eval", "replay", file, "--profile", "corelocation", "--profile", "responsive"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("corelocation") && result.stdout.contains("responsive"))
        #expect(result.stdout.contains("exit latency ≈10 Hz"))
        // The exit figures per rate class over all recordings.
        #expect(result.stdout.contains("Per stream rate class, all 1 recording(s) together"), "\(result.stdout)")
        #expect(result.stdout.contains("≈0.2 Hz (sparse): ") && result.stdout.contains("  false exits, stationary (per 1000 h)"))
        #expect(result.stdout.contains("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7:9 @ Room1"))
        // Each end listed with its history: the one end, at the recording's end (*), heard 19.9 s in 200
        // sightings, its longest gap 0.1 s; and the departures' floor per class.
        #expect(result.stdout.contains("stream ends (a silence ≥ 60 s or the last sighting; * the recording's end"), "\(result.stdout)")
        let endRow = result.stdout.split(separator: "\n").first { $0.contains("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7:9 @ Room1 *") }
        // Columns two spaces apart or more: stream, class, last s, heard s (sightings), gap s, one exit per profile.
        let cells = endRow.map { $0.split(separator: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } } ?? []
        #expect(cells.count == 7 && cells[2] == "19.9" && cells[3] == "19.9 (200)" && cells[4] == "0.1", "\(cells)")
        #expect(result.stdout.contains("their streams' longest recent gap"))
        // A window that is not a number of seconds is refused by name.
        let bad = try await CLI.run(["eval", "replay", file, "--recent-window", "-1"])
        #expect(bad.status != 0 && bad.stderr.contains("--recent-window"), "\(bad.stderr)")
        // Nor an absurd one: 1e19 s trapped (a fatal error, status 132) where the legend printed it.
        for option in ["--flap-window", "--silence", "--tail", "--tolerance", "--recent-window"] {
            let huge = try await CLI.run(["eval", "replay", file, option, "1e19"])
            #expect(huge.status == 64 && huge.stderr.contains("\(option) must be") && huge.stderr.contains("1000000000"), "\(option): \(huge.status) \(huge.stderr)")
        }
    }

    @Test("A missing file, a damaged file and an unknown profile are named in the error")
    func errors() async throws {
        let missing = try await CLI.run(["eval", "replay", "/nonexistent/run.json.gz"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/run.json.gz"), "\(missing.stderr)")

        let damaged = TestScratch.directory.appendingPathComponent("rk-eval-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        try Data(#"{"scannerID": "Room1", "uuid": "not-a-uuid", "major": 1, "minor": 1, "rssi": -60, "time": 1}"#.utf8).write(to: URL(fileURLWithPath: damaged))
        let bad = try await CLI.run(["eval", "replay", damaged])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(damaged) && bad.stderr.contains("uuid"), "\(bad.stderr)")
        #expect(bad.stdout.isEmpty, "nothing printed before the error")

        let profile = try await CLI.run(["eval", "replay", damaged, "--profile", "nope"])
        #expect(profile.status != 0)
        #expect(profile.stderr.contains("nope"), "\(profile.stderr)")
    }
}
