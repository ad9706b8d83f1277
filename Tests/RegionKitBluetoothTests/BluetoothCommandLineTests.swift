import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RegionKitBluetooth
import RegionKitTestSupport
import RegionKitGateway

/// `regionkit scan / advertise / monitor / replay FILE.btsnoop`, run as a user would.
@Suite("regionkit Bluetooth commands", .serialized, .tags(.endToEnd))
struct BluetoothCommandLineTests {
    /// The built executable, beside the test bundle in the build directory.
    static var executable: String {
        var directory = Bundle.main.bundleURL
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("regionkit")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/regionkit").path
    }

    static func regionkit(_ arguments: [String], timeout: Duration = .seconds(30), signal: (number: Int32, after: Duration)? = nil) async throws -> Tool.Result {
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw TestFailure("regionkit is not built at \(executable)") }
        return try await Tool.run(executable, arguments, timeout: timeout, signal: signal)
    }

    static func objects(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// True when this kernel has no AF_BLUETOOTH socket family (as on this project's machines).
    static var kernelLacksBluetooth: Bool {
        let descriptor = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if descriptor >= 0 { close(descriptor); return false }
        return errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT
    }

    @Test("A bad --hci spec is refused with the reason, exit 1", arguments: [
        ("bogus:1", "unknown transport 'bogus'"), ("tcp:127.0.0.1", "port"), ("tcp:localhost:99999", "not a number in 1...65535"), ("hciX", "adapter number"),
    ])
    func badSpec(spec: String, reason: String) async throws {
        let result = try await Self.regionkit(["scan", "--hci", spec, "--duration", "1"])
        #expect(result.status == 1, "\(spec): \(result.stderr)")
        #expect(result.stderr.hasPrefix("regionkit: error: --hci '\(spec)'") && result.stderr.contains(reason), "\(spec): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("hci0 on a kernel without Bluetooth: 'no Bluetooth support in this kernel', exit 1, for scan, advertise and monitor")
    func noKernelSupport() async throws {
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        for arguments in [["scan", "--hci", "hci0"], ["advertise", "--hci", "hci0", "--uuid", uuid], ["monitor", "--hci", "hci0", "--region", "a:\(uuid)"]] {
            let result = try await Self.regionkit(arguments + ["--duration", "1"])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            if Self.kernelLacksBluetooth {
                #expect(result.stderr.contains("regionkit: error: cannot open hci0:user: no Bluetooth support in this kernel"), "\(result.stderr)")
            } else {
                #expect(result.stderr.contains("hci0"), "\(result.stderr)")
            }
        }
    }

    @Test("Nothing listening on the TCP port: a clear error and exit 1, not a hang")
    func nothingListening() async throws {
        try await Loopback.withRefusingPort { port in
            let started = ContinuousClock.now
            let result = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:\(port)", "--json"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot open tcp:127.0.0.1:\(port): cannot connect (nothing listens there)"), "\(result.stderr)")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }

    @Test("Argument errors: bad uuid, power, interval, no region, unknown replay format, missing capture")
    func argumentErrors() async throws {
        let cases: [([String], String)] = [
            (["advertise", "--hci", "tcp:127.0.0.1:9", "--uuid", "nope"], "--uuid 'nope' is not a UUID"),
            (["advertise", "--hci", "tcp:127.0.0.1:9", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--measured-power", "200"], "outside -128...127"),
            (["advertise", "--hci", "tcp:127.0.0.1:9", "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--interval-ms", "5"], "--interval-ms 5.0 is outside 20...10240"),
            (["monitor", "--hci", "tcp:127.0.0.1:9"], "give at least one --region"),
            (["monitor", "--hci", "tcp:127.0.0.1:9", "--region", "a:not-a-uuid"], "not-a-uuid"),
            (["replay", "capture.pcapng"], "cannot tell the format"),
            // An unknown option before the file: named (its value was taken for the file, and the error was about that).
            (["replay", "--store", "s.sqlite", "run.json.gz"], "Unknown option '--store'"),
            (["replay", "/nonexistent/capture.btsnoop"], "cannot read the capture '/nonexistent/capture.btsnoop'"),
            (["scan", "--hci", "tcp:127.0.0.1:9", "--mode", "sideways"], "sideways"),
        ]
        for (arguments, message) in cases {
            let result = try await Self.regionkit(arguments)
            #expect(result.status != 0, "\(arguments) succeeded")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test("With Bumble: scan --json --capture, replay of that capture, monitor --range --json, advertise",
          .enabled(if: BumbleControllers.python != nil, BumbleControllers.skipMessage), .timeLimit(.minutes(2)))
    func liveCommands() async throws {
        let bumble = try BumbleControllers(controllers: 3, iBeacons: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59"], scanJSON: true)
        defer { bumble.stop() }
        try await bumble.waitUntilReady()
        let capture = TestScratch.directory.appendingPathComponent("regionkit-cli-\(getpid()).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }

        let scan = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:\(bumble.ports[0])", "--json", "--duration", "2", "--capture", capture])
        #expect(scan.status == 0, "\(scan.stderr)")
        let lines = try Self.objects(scan.stdout)
        let beacons = lines.filter { $0["ibeacon"] != nil }
        #expect(beacons.count >= 15 && beacons.count <= 25, "\(beacons.count) iBeacon frames in 2 s at 100 ms")
        let first = try #require(beacons.first)
        #expect(first["address"] as? String == "C0:FF:EE:00:00:01")
        #expect(first["addressType"] as? String == "public")
        #expect(first["eventType"] as? String == "extended(connectable)")
        #expect(first["rssi"] as? Int == -50 && first["txPower"] as? Int == 0)
        #expect((first["data"] as? String)?.hasPrefix("0201061aff4c000215e2c56db5") == true)
        let ibeacon = try #require(first["ibeacon"] as? [String: Any])
        #expect(ibeacon["uuid"] as? String == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(ibeacon["major"] as? Int == 1 && ibeacon["minor"] as? Int == 2 && ibeacon["measuredPower"] as? Int == -59)
        #expect(scan.stderr.contains("scan-response repeat(s) dropped") && scan.stderr.contains("packet(s) captured to \(capture)"))

        // The capture replays (format inferred from .btsnoop): inside from the first record, then out after the end.
        let replay = try await Self.regionkit(["replay", capture, "--region", "lobby:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2", "--json", "--instant", "--all-events"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = try Self.objects(replay.stdout).filter { $0["region"] as? String == "lobby" }.compactMap { $0["type"] as? String }
        #expect(replayed.first == "didStartMonitoring")
        #expect(replayed.contains("didExitRegion"), "\(replayed)")

        // 4 s: "other" is determined outside after the 3 s initial window of the responsive profile.
        let monitor = try await Self.regionkit(["monitor", "--hci", "tcp:127.0.0.1:\(bumble.ports[1])", "--region", "lobby:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                                          "--region", "other:FDA50693-A4E2-4FB1-AFCF-C6EB07647825", "--range", "--json", "--duration", "4"])
        #expect(monitor.status == 0, "\(monitor.stderr)")
        let events = try Self.objects(monitor.stdout)
        #expect(events.allSatisfy { LocationEvent.contractTypes.contains($0["type"] as? String ?? "") })
        #expect(events.contains { $0["type"] as? String == "didDetermineState" && $0["region"] as? String == "lobby" && $0["state"] as? String == "inside" })
        #expect(events.contains { $0["type"] as? String == "didDetermineState" && $0["region"] as? String == "other" && $0["state"] as? String == "outside" })
        let ranged = events.filter { $0["type"] as? String == "didRangeBeacons" && $0["region"] as? String == "lobby" }
        #expect(!ranged.isEmpty)
        let rangedBeacon = try #require((ranged.last?["beacons"] as? [[String: Any]])?.first)
        #expect(rangedBeacon["major"] as? Int == 1 && rangedBeacon["minor"] as? Int == 2 && rangedBeacon["rssi"] as? Int == -50)

        let before = bumble.lines.count
        let advertise = try await Self.regionkit(["advertise", "--hci", "tcp:127.0.0.1:\(bumble.ports[2])", "--uuid", "FDA50693-A4E2-4FB1-AFCF-C6EB07647825",
                                            "--major", "3", "--minor", "4", "--measured-power", "-70", "--duration", "1.5"])
        #expect(advertise.status == 0, "\(advertise.stderr)")
        #expect(advertise.stdout.contains("Advertising iBeacon FDA50693-A4E2-4FB1-AFCF-C6EB07647825:3:4 measured power -70 dBm every 100 ms"))
        let ours = bumble.lines.dropFirst(before).filter { $0.text.hasPrefix("ADV ") && $0.text.contains("\"F0:00:00:00:00:03\"") && $0.text.contains("\"scan_response\": false") }
        // On the air (≈ 15 frames); the interval itself is checked by the median gap in
        // BumbleEndToEndTests: a count over 1.5 s falls when Bumble's Python is starved a moment.
        #expect(ours.count >= 6, "Bumble received \(ours.count) frames from `regionkit advertise` in 1.5 s")
        #expect(ours.allSatisfy { $0.text.contains("0201061aff4c000215fda50693a4e24fb1afcfc6eb0764782500030004ba") })
    }

    @Test("Ctrl-C or SIGTERM stops advertise, scan and monitor cleanly: the controller stops advertising (it went on beaconing after the tool died), scan prints its summary, exit 0",
          .enabled(if: BumbleControllers.python != nil, BumbleControllers.skipMessage), .timeLimit(.minutes(2)))
    func signalsStopCleanly() async throws {
        let bumble = try BumbleControllers(controllers: 3, iBeacons: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59"], scanJSON: true)
        defer { bumble.stop() }
        try await bumble.waitUntilReady()
        func ours() -> Int {
            bumble.lines.filter { $0.text.hasPrefix("ADV ") && $0.text.contains("\"F0:00:00:00:00:03\"") }.count
        }
        let advertise = try await Self.regionkit(["advertise", "--hci", "tcp:127.0.0.1:\(bumble.ports[2])", "--uuid", "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"],
                                                 signal: (SIGINT, .seconds(3)))
        #expect(advertise.status == 0, "\(advertise.stderr)")
        #expect(advertise.stdout.contains("Stopped advertising."), "\(advertise.stdout)")
        #expect(advertise.stderr.contains("SIGINT: stopping"), "\(advertise.stderr)")
        let heard = ours()
        #expect(heard >= 10, "the advertiser was on the air: \(heard) frames")
        try await Task.sleep(for: .seconds(1.5))
        #expect(ours() <= heard + 1, "frames after the advertiser stopped: \(ours() - heard)")

        let scan = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:\(bumble.ports[0])", "--json"], signal: (SIGTERM, .seconds(3)))
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stderr.contains("SIGTERM: stopping") && scan.stderr.contains("iBeacon frame(s)"), "the summary: \(scan.stderr)")
        #expect(try Self.objects(scan.stdout).contains { $0["ibeacon"] != nil })

        let monitor = try await Self.regionkit(["monitor", "--hci", "tcp:127.0.0.1:\(bumble.ports[1])", "--region", "lobby:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--json"],
                                               signal: (SIGINT, .seconds(3)))
        #expect(monitor.status == 0, "\(monitor.stderr)")
        #expect(try Self.objects(monitor.stdout).contains { $0["type"] as? String == "didDetermineState" && $0["state"] as? String == "inside" })
    }

    @Test("scan --publish: the sightings reach the broker as RegionKit scanner batches with the scanner's name",
          .enabled(if: BumbleControllers.python != nil && MosquittoBroker.isAvailable, "needs Bumble and mosquitto"), .timeLimit(.minutes(2)))
    func scanPublishes() async throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let bumble = try BumbleControllers(controllers: 1, iBeacons: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2:-59"], scanJSON: true)
        defer { bumble.stop() }
        try await bumble.waitUntilReady()
        let subscriber = try await broker.subscribe(topic: "regionkit/scanners/+", count: 1000, timeout: 30)
        defer { subscriber.terminate() }
        let statuses = try await broker.subscribe(topic: "regionkit/scanners/+/status", count: 2, timeout: 30)
        defer { statuses.terminate() }
        let scan = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:\(bumble.ports[0])", "--duration", "2",
                                             "--publish", broker.url, "--scanner", "kitchen"])
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stderr.contains("to regionkit/scanners/kitchen; 0 dropped"), "\(scan.stderr)")
        let messages = await subscriber.waitForMessages(5, timeout: 5)
        let batches = try messages.map { try ScannerBatch(json: Array($0.payload.utf8)) }
        #expect(messages.allSatisfy { $0.topic == "regionkit/scanners/kitchen" })
        #expect(batches.allSatisfy { $0.scanner == "kitchen" })
        let sightings = batches.flatMap(\.sightings)
        #expect(sightings.count >= 10, "\(sightings.count) sightings in 2 s at 100 ms")
        #expect(sightings.allSatisfy { $0.identity.major == 1 && $0.identity.minor == 2 && $0.rssi == -50 && $0.measuredPower == -59 && $0.offset <= 0 })
        // Published counts on stderr match what arrived.
        #expect(scan.stderr.contains("published \(sightings.count) sighting(s)"), "\(scan.stderr) vs \(sightings.count)")
        // Its status: online while it scanned, offline once it stopped, and that kept (retained)
        // for whoever subscribes next (a hub starting).
        let said = await statuses.waitForMessages(2, timeout: 5)
        #expect(said.map(\.topic) == ["regionkit/scanners/kitchen/status", "regionkit/scanners/kitchen/status"] && said.map(\.payload) == ["online", "offline"],
                "\(said)")
        let next = try await broker.subscribe(topic: "regionkit/scanners/kitchen/status", count: 1, timeout: 10)
        defer { next.terminate() }
        let kept = await next.waitForMessages(1, timeout: 10)
        #expect(kept.map(\.payload) == ["offline"] && kept.allSatisfy(\.retained), "\(kept)")

        let refused = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:9", "--publish", broker.url])
        #expect(refused.status != 0 && refused.stderr.contains("--publish needs --scanner"), "\(refused.stderr)")
        let alone = try await Self.regionkit(["scan", "--hci", "tcp:127.0.0.1:9", "--no-status"])
        #expect(alone.status != 0 && alone.stderr.contains("--no-status go with --publish"), "\(alone.stderr)")
    }
}
