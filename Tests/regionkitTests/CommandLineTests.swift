import Foundation
import Testing
import RegionKitCore
import RegionKitTestSupport

/// Runs the built `regionkit` executable as a user would.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable sits beside the test bundle in the build directory.
    static var executable: URL {
        var directory = Bundle.main.bundleURL
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("regionkit")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/regionkit")
    }

    /// Runs the command through `Tool.run`: an async wait that never holds a cooperative thread,
    /// and a time limit that holds (the process is killed and the test fails with a clear error).
    /// (It once read stdout and stderr to their end before starting its deadline, so a hung
    /// command hung the test run.)
    /// The default limit is generous: it only stops a hang (phase 1 runs at nice 19 beside
    /// phase 2, so a command may be slow there; it is a hang guard, not a speed check).
    static func run(_ arguments: [String], timeout: TimeInterval = 300) async throws -> Result {
        let result = try await Tool.run(executable.path, arguments, timeout: .milliseconds(Int64(timeout * 1000)))
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

@Suite("regionkit command line", .tags(.endToEnd))
struct CommandLineTests {
    static let contractTypes: Set<String> = ["didStartMonitoring", "monitoringDidFail", "didEnterRegion", "didExitRegion", "didDetermineState", "didRangeBeacons"]

    static func objects(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test("simulate two-beacons --json --instant: one contract object per line, spec §1 behaviour")
    func simulateJSON() async throws {
        let result = try await CLI.run(["simulate", "two-beacons", "--json", "--instant"])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try Self.objects(result.stdout)
        #expect(objects.count >= 8)
        for object in objects {
            let type = try #require(object["type"] as? String)
            #expect(Self.contractTypes.contains(type))
            #expect(object["t"] is NSNumber)
            #expect(object["region"] is String)
            #expect((object["state"] != nil) == (type == "didDetermineState"))
        }
        let summary = objects.map { "\($0["type"]!):\($0["region"]!)" }
        #expect(!summary.contains("didEnterRegion:uuid-only") && !summary.contains("didExitRegion:uuid-only"))
        #expect(summary.contains("didExitRegion:beacon-A") && summary.contains("didEnterRegion:beacon-B"))
    }

    @Test("Every built-in runs under both profiles; ranging objects carry the beacon fields",
          arguments: ["museum", "store-coupon", "start-inside", "flaky-radio", "geofence-walk"], ["corelocation", "responsive"])
    func everyBuiltIn(name: String, profile: String) async throws {
        let result = try await CLI.run(["simulate", name, "--json", "--instant", "--profile", profile, "--seed", "3"])
        #expect(result.status == 0, "\(name) \(profile): \(result.stderr)")
        let objects = try Self.objects(result.stdout)
        #expect(!objects.isEmpty)
        for ranging in objects where ranging["type"] as? String == "didRangeBeacons" {
            for beacon in try #require(ranging["beacons"] as? [[String: Any]]) {
                #expect(Set(beacon.keys).isSuperset(of: ["uuid", "major", "minor", "proximity", "accuracy", "rssi"]))
            }
        }
        if name == "flaky-radio" {
            let failure = try #require(objects.first { $0["type"] as? String == "monitoringDidFail" })
            let error = try #require(failure["error"] as? [String: Any])
            #expect(error["code"] as? String == "sourceUnavailable")
            #expect(error["message"] is String)
        }
    }

    @Test("--all-events adds app actions and authorization changes")
    func allEvents() async throws {
        let result = try await CLI.run(["simulate", "store-coupon", "--json", "--instant", "--all-events"])
        let types = Set(try Self.objects(result.stdout).compactMap { $0["type"] as? String })
        #expect(types.contains("appAction"))
    }

    @Test("--version prints the version alone")
    func version() async throws {
        let result = try await CLI.run(["--version"])
        #expect(result.status == 0 && result.stdout == RegionKitVersion.current + "\n", "\(result.stdout)\(result.stderr)")
        #expect(RegionKitVersion.current.split(separator: ".").count == 3)
    }

    @Test("The human timeline shows what the field report's app showed")
    func timeline() async throws {
        let result = try await CLI.run(["simulate", "museum", "--instant"])
        #expect(result.status == 0)
        for expected in ["START  monitoring museum", "STATE  museum is outside", "ENTER  museum", "RANGE  museum", "exhibit 1 shown", "EXIT   museum"] {
            #expect(result.stdout.contains(expected), "missing \(expected)")
        }
    }

    @Test("A scenario printed by `scenarios show` runs from a file")
    func scenarioFile() async throws {
        let shown = try await CLI.run(["scenarios", "show", "start-inside"])
        #expect(shown.status == 0)
        let file = TestScratch.directory.appendingPathComponent("rk-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(shown.stdout.utf8).write(to: file)
        let fromFile = try await CLI.run(["simulate", file.path, "--json", "--instant"])
        let builtIn = try await CLI.run(["simulate", "start-inside", "--json", "--instant"])
        #expect(fromFile.status == 0)
        #expect(fromFile.stdout == builtIn.stdout)
    }

    @Test("Bad arguments and files: a clear message on stderr and a non-zero exit")
    func errors() async throws {
        let unknown = try await CLI.run(["simulate", "atlantis", "--instant"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("'atlantis' is neither a built-in scenario"))
        #expect(unknown.stdout.isEmpty)

        let profile = try await CLI.run(["simulate", "museum", "--profile", "android"])
        #expect(profile.status != 0)
        #expect(profile.stderr.contains("android"))

        let file = TestScratch.directory.appendingPathComponent("rk-bad-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"name": "bad", "duration": 10, "beacons": [], "path": [{"t": 0, "x": 0}], "regions": []}"#.utf8).write(to: file)
        let bad = try await CLI.run(["simulate", file.path, "--instant"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(file.path) && bad.stderr.contains("missing field 'y' at path[0]"), "\(bad.stderr)")

        let speed = try await CLI.run(["simulate", "museum", "--speed", "0"])
        #expect(speed.status != 0)
        #expect(speed.stderr.contains("--speed"))

        // A mistyped required option is named as such (the missing --config was reported instead).
        let typo = try await CLI.run(["run", "--confg", "regionkit.yaml"])
        #expect(typo.status == 64 && typo.stderr.contains("Unknown option '--confg'. Did you mean '--config'?"), "\(typo.stderr)")
        let missing = try await CLI.run(["run"])
        #expect(missing.status == 64 && missing.stderr.contains("Missing expected argument '--config <config>'")
                && missing.stderr.contains("Usage: regionkit run --config <config>"), "\(missing.stderr)")
    }

    @Test("demo runs the museum live and finishes")
    func demo() async throws {
        let result = try await CLI.run(["demo", "--speed", "400"], timeout: 180)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("RegionKit demo"))
        #expect(result.stdout.contains("exhibit 4 shown"))
        #expect(result.stdout.contains("EXIT   museum"))
    }
}
