import ArgumentParser
import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitService
import RegionKitStore

extension Bench {
    /// `regionkit bench eventlog`: how fast the daemon's event log keeps up with the engine, per
    /// SQLite transaction policy, side by side in one run.
    struct EventLog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "eventlog",
            abstract: "Events logged per second by the daemon's service (engine → SQLite log), one transaction per write against group commit, side by side.",
            discussion: """
            A MonitoringService on a scratch SQLite store (WAL, synchronous = FULL, as the daemon's) \
            monitors N beacon regions, one per identity, determined outside after the first 3 s (no \
            event). Each identity is then sighted once, --batch \
            sightings per ingest call (1: one MQTT message at a time; 64: a scanner's buffer or a \
            backlog); each sighting enters its region: a state row and two events (didEnterRegion, \
            didDetermineState). Each configuration runs on a fresh store, one after the other in the \
            same process: --group-commit 1 (every write its own transaction, as before session 48) \
            and the daemon's default (the writes of events delivered together, up to 512 per transaction). \
            The figure is events logged (committed, acknowledged) per second of wall time, checked \
            against the store's count at the end.
            """
        )

        @Option(help: "Regions (and identities, one sighting each).")
        var regions: Int = 4_000

        @Option(help: "Sightings per ingest call, comma-separated.")
        var batch: String = "1,64"

        @Option(help: "Group-commit limits to compare, comma-separated (1 = one transaction per write).")
        var groupCommit: String = "1,512"

        func run() async throws {
            guard regions > 0, regions <= 1_000_000 else { throw ValidationError("--regions must be within 1...1000000") }
            let batches = try Self.integers(batch, option: "--batch", range: 1...100_000)
            let limits = try Self.integers(groupCommit, option: "--group-commit", range: 1...100_000)
            Console.line("event log throughput: \(regions) beacon regions, one sighting each (enter: 1 state row + 2 events), SQLite WAL, synchronous = FULL")
            Console.line("  sightings/call  group commit   register (events/s)   sightings (events/s)")
            for size in batches {
                for limit in limits {
                    let result = try await measure(batch: size, groupCommit: limit)
                    Console.line(String(format: "  %14d  %12d   %19.0f   %20.0f", size, limit, result.register, result.sightings))
                }
            }
        }

        /// Events per second logged while registering, and while sighting.
        func measure(batch: Int, groupCommit: Int) async throws -> (register: Double, sightings: Double) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-bench-eventlog-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let lock = try RegionStoreLock(storePath: path)
            defer { withExtendedLifetime(lock) {} }
            let store = try RegionStore(path: path)
            let clock = VirtualClock()
            let service = MonitoringService(store: store, automation: Automation(), clock: clock, sources: [.beacon: .authorized],
                                            groupCommitLimit: groupCommit)
            try await service.start(regions: [])
            let identities = (0..<regions).map(IngestRun.identity)
            let definitions = try identities.enumerated().map { index, identity in
                Region.beacon(try BeaconRegion(identifier: "b\(index)", uuid: identity.uuid, major: identity.major, minor: identity.minor))
            }
            let registering = ContinuousClock.now
            service.manager.startMonitoring(for: definitions)
            let registered = registering.duration(to: .now).inSeconds
            // Determined outside after the initial window (no event without a crossing), so that
            // each sighting is a crossing: an entry.
            clock.advance(to: Timestamp(seconds: 4))
            guard await service.manager.waitUntilDelivered(timeout: .seconds(60)) == 0,
                  service.manager.monitoredRegions.allSatisfy({ service.manager.state(for: $0) == .outside }) else {
                throw ValidationError("the regions were not determined outside after the initial window")
            }
            let before = try store.lastEventID()

            let observations = identities.enumerated().map { index, identity in
                BeaconObservation(identity: identity, rssi: -60, measuredPower: -59, timestamp: Timestamp(seconds: 5 + Double(index) * 1e-4))
            }
            clock.advance(to: Timestamp(seconds: 5))
            let sighting = ContinuousClock.now
            for start in stride(from: 0, to: observations.count, by: batch) {
                service.manager.ingest(contentsOf: Array(observations[start..<min(start + batch, observations.count)]))
            }
            let sighted = sighting.duration(to: .now).inSeconds
            let logged = try store.lastEventID() - before
            try await service.stop(reason: "bench")
            guard service.persistenceFailures == 0 else {
                throw ValidationError("\(service.persistenceFailures) writes failed during the benchmark")
            }
            guard logged == Int64(2 * regions) else {
                throw ValidationError("expected \(2 * regions) events logged by the sightings, found \(logged): the benchmark's premise (each sighting enters) does not hold")
            }
            return (Double(regions) / registered, Double(logged) / sighted)
        }

        static func integers(_ list: String, option: String, range: ClosedRange<Int>) throws -> [Int] {
            let values = list.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !values.isEmpty, values.allSatisfy({ $0.map(range.contains) ?? false }) else {
                throw ValidationError("\(option) \(list): expected comma-separated integers within \(range.lowerBound)...\(range.upperBound)")
            }
            return values.compactMap { $0 }
        }
    }
}
