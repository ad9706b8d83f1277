import Foundation
import Testing
import RegionKitCore
@testable import RegionKitLocation
#if canImport(Glibc)
import Glibc
import RegionKitTestSupport
#endif

/// Runs a real gpsd through `gpsfake` (Debian: `apt-get install -y gpsd gpsd-clients`) replaying a
/// regression log, reads it with GPSDClient and compares with the log's .chk TPVs.
/// Skipped loudly when gpsfake is not on PATH or the fixtures are missing.
@Suite("gpsd client end-to-end with gpsfake", .serialized, .tags(.endToEnd))
struct GPSDEndToEndTests {
    static let gpsfake: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let p = "\(dir)/gpsfake"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }()

    /// Child processes of `pid` (gpsfake runs gpsd as its child).
    static func children(of pid: Int32) -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { name -> Int32? in
            guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }
    }

    /// The control socket gpsfake's gpsd child was started with (`-F PATH`), from its command line.
    static func controlSocket(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let flag = arguments.firstIndex(of: "-F"), flag + 1 < arguments.count else { return nil }
        return arguments[flag + 1]
    }

    /// Stops gpsfake by PID, at once: its gpsd child and then gpsfake get SIGTERM, and SIGKILL
    /// after 2 s. (SIGINT, used first, cost 2–5 s a run: gpsfake notices it only between reads and,
    /// with -1, lingers for a drain timeout after the log; nothing of its orderly shutdown matters
    /// here.) The control socket gpsfake leaves in the temporary directory either way
    /// (`gpsfake-PID.sock`) is removed.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        let kids = children(of: process.processIdentifier)
        let sockets = kids.compactMap(controlSocket(of:))
        defer { for socket in sockets where socket.contains("gpsfake-") { unlink(socket) } }
        for k in kids where kill(k, 0) == 0 { kill(k, SIGTERM) }
        process.stop(signal: SIGTERM, grace: .seconds(2))
        for k in kids where kill(k, 0) == 0 { kill(k, SIGKILL) }
    }

    @Test(
        "bt451.log through gpsfake + gpsd matches the .chk TPVs",
        .enabled(if: gpsfake != nil, "gpsfake not on PATH: apt-get install -y gpsd gpsd-clients"),
        .enabled(if: Fixtures.has("gpsd/bt451.log.chk"), "gpsd fixtures missing (set REGIONKIT_FIXTURES)"),
        .timeLimit(.minutes(2)))
    func bt451() async throws {
        let log = try #require(Fixtures.url("gpsd/bt451.log"))
        let port = try Loopback.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: GPSDEndToEndTests.gpsfake!)
        // -P port, -1 play the log once, -c 0.05 s between sentences, -q quiet. gpsfake starts
        // `gpsd -b -N -S port` on loopback and waits for the first client before feeding.
        process.arguments = ["-P", String(port), "-1", "-c", "0.05", "-q", log.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { GPSDEndToEndTests.stop(process) }

        // Wait (bounded) for gpsd to listen; the client's own reconnect loop covers the race too.
        let client = GPSDClient(configuration: .init(
            port: port, initialBackoff: 0.2, maximumBackoff: 1, maximumReconnectAttempts: 15, dropRepeats: true))
        let oracle = GPSDOracle(chk: Data(try Fixtures.bytes("gpsd/bt451.log.chk")), log: [])
        let truth = oracle.timedCycles
        let wanted = truth.count
        // Read until every timed cycle of the log has been seen (or 45 s pass).
        let events = await collect(client.events(), count: 10_000, timeout: 45) { events in
            var times = Set<String>()
            for case .fix(_, let tpv) in events { if let t = tpv.time { times.insert(t) } }
            return times.count >= wanted
        }
        var tpvs: [GPSDMessage.TPV] = []
        for case .fix(_, let tpv) in events { tpvs.append(tpv) }
        print("E2E: \(events.count) events, \(tpvs.count) TPVs from live gpsd")
        // Live gpsd differs from its regression mode in the date: it treats a 2009 date from a
        // receiver as a GPS week rollover (+1024 weeks → 2029) and may add a day when the log
        // jumps back in time-of-day (segment splice, read as a midnight wrap). So compare
        // time of day exactly and require the date offset to be 0 or 1024 weeks ± 1 day.
        let rollover = 1024.0 * 7 * 86_400
        let live = GPSDOracle.lastOfRuns(tpvs.filter { $0.timestamp != nil }, key: \.timestamp)
        var matched = 0
        var problems: [String] = []
        for t in live {
            let ts = t.timestamp!.seconds
            let sod = ts.truncatingRemainder(dividingBy: 86_400)
            guard let c = truth.first(where: { abs($0.time!.seconds.truncatingRemainder(dividingBy: 86_400) - sod) < 1e-6 }) else {
                problems.append("no .chk cycle at time of day of \(t.time ?? "?")"); continue
            }
            let offset = ts - c.time!.seconds
            let offsetOK = [0.0, rollover, rollover + 86_400, rollover - 86_400].contains { abs(offset - $0) < 1e-3 }
            let same = t.mode == c.mode && abs((t.lat ?? .nan) - (c.lat ?? .nan)) <= 1e-6 && abs((t.lon ?? .nan) - (c.lon ?? .nan)) <= 1e-6
            if offsetOK && same { matched += 1 } else { problems.append("\(t.time ?? "?"): live \(t.mode) \(t.lat ?? .nan),\(t.lon ?? .nan) vs chk \(c.mode) \(c.lat ?? .nan),\(c.lon ?? .nan)") }
        }
        print("E2E: \(matched)/\(live.count) live timed cycles match .chk (of \(truth.count) in .chk)")
        #expect(problems.isEmpty, "\(problems)")
        #expect(matched == wanted, "all \(wanted) timed cycles of the log should arrive")
        // The log starts indoors: gpsd reports mode 1 and the client turns it into "unavailable".
        #expect(tpvs.contains { $0.mode <= 1 })
        var sawUnavailable = false
        for case .fix(let f, let tpv) in events where tpv.mode <= 1 { sawUnavailable = f.mode == .noFix }
        #expect(sawUnavailable)
    }
}
