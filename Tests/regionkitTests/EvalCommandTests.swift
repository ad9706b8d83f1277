import Foundation
import Testing

/// `regionkit eval detection` as a user runs it.
@Suite("regionkit eval detection")
struct EvalCommandTests {
    static let small = ["eval", "detection", "--hours", "1", "--departures", "24", "--interval", "0.1", "--loss", "0.3", "--shadowing", "none", "--seed", "4"]

    @Test("--json: one object per profile with the figures; the same seed prints the same lines")
    func json() async throws {
        let first = try await CLI.run(Self.small + ["--json"], timeout: 300)
        #expect(first.status == 0, "\(first.stderr)")
        let objects = try CommandLineTests.objects(first.stdout)
        #expect(objects.compactMap { $0["profile"] as? String } == ["corelocation", "altbeacon", "responsive"])
        for object in objects {
            for key in ["interval_s", "loss", "shadowing", "departures", "exit_p50_s", "exit_p95_s", "false_exits", "beacon_hours",
                        "false_exits_per_1000h", "arrivals", "arrival_false_exits"] {
                #expect(object[key] != nil, "missing \(key)")
            }
            #expect(object["departures"] as? Int == 24)
            #expect(object["beacon_hours"] as? Double == 1)
        }
        let ios = try #require(objects.first?["exit_p50_s"] as? Double)
        let fast = try #require(objects.last?["exit_p95_s"] as? Double)
        #expect(fast < ios / 5, "responsive p95 \(fast) s vs Core Location p50 \(ios) s")
        let again = try await CLI.run(Self.small + ["--json", "--jobs", "1"], timeout: 300)
        #expect(again.stdout == first.stdout)
    }

    @Test("The table names the conditions and shows the false-exit resolution")
    func table() async throws {
        let result = try await CLI.run(Self.small + ["--profile", "responsive", "--profile", "altbeacon"], timeout: 300)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("exit p95"))
        let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("0.1 s") }
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0.contains("in 1.0 h") })
        #expect(rows.first?.contains("responsive") == true)
    }

    @Test("Bad arguments: a clear message and a non-zero exit")
    func errors() async throws {
        let loss = try await CLI.run(["eval", "detection", "--loss", "1.5", "--hours", "1"])
        #expect(loss.status == 1)
        #expect(loss.stderr.contains("loss rate 1.5"), "\(loss.stderr)")
        let profile = try await CLI.run(["eval", "detection", "--profile", "nokia"])
        #expect(profile.status != 0)
        #expect(profile.stderr.contains("nokia"))
        let shadowing = try await CLI.run(["eval", "detection", "--shadowing", "fog"])
        #expect(shadowing.status != 0)
        #expect(shadowing.stderr.contains("fog"))
    }
}
