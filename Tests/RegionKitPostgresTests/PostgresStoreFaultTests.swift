import Foundation
import Glibc
import RegionKitConcurrency
import RegionKitCore
import Testing
import RegionKitPostgres
import RegionKitStore
import RegionKitTestSupport

/// The store against a server that stops answering without closing anything: a frozen
/// PostgreSQL (SIGSTOP of the postmaster and its backends) is what a hung host or a network path
/// that drops packets looks like. Every operation must give up within the store's operation
/// timeout, and work again when the server does.
@Suite("PostgreSQL store: a server that stops answering", .serialized, .tags(.endToEnd),
       .enabled(if: PostgresServer.isAvailable, PostgresServer.skipReason))
struct PostgresStoreFaultTests {
    /// `pid` and every process below it, deepest first.
    static func tree(_ pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var children: [Int32: [Int32]] = [:]
        for entry in entries {
            guard let child = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "(comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { children[parent, default: []].append(child) }
        }
        func below(_ pid: Int32) -> [Int32] { (children[pid] ?? []).flatMap { below($0) + [$0] } }
        return below(pid) + [pid]
    }

    /// Runs `operation` in its own task and waits at most `limit` for it: nil when it did not
    /// finish by then (a hang, which the test reports instead of hanging itself).
    static func within<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async -> (Result<T, any Error>, Duration)? {
        let outcome = LockedBox<(Result<T, any Error>, Duration)?>(nil)
        let started = ContinuousClock.now
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.withLock { $0 = (result, ContinuousClock.now - started) }
        }
        while ContinuousClock.now - started < limit {
            if let done = outcome.withLock({ $0 }) { return done }
            try? await Task.sleep(for: .milliseconds(20))
        }
        task.cancel()
        return outcome.withLock { $0 }
    }

    @Test("a frozen server (SIGSTOP): appends, reads and lease rounds fail within the operation timeout with a clear error, and succeed again once it runs (nothing accepted before is lost)",
          .timeLimit(.minutes(3)))
    func frozenServer() async throws {
        let server = try await PostgresServer.started(database: "frozen")
        defer { server.stop() }
        let store = try await PostgresRegionStore(host: "127.0.0.1", port: server.port, username: server.user, database: "frozen",
                                                  operationTimeout: .seconds(1))
        let accepted = try await store.append(time: 1, type: "didEnterRegion", region: "door", state: "inside", reason: nil, json: "{}", hooks: [])
        let postmaster = try #require(server.pid)
        let frozen = Self.tree(postmaster)
        #expect(frozen.count >= 2, "the postmaster and at least this store's backend: \(frozen)")
        for pid in frozen { kill(pid, SIGSTOP) }
        // Whatever happens below, the server runs again before it is stopped.
        defer { for pid in Self.tree(postmaster) { kill(pid, SIGCONT) } }

        // Each operation is given 5 s (five times the timeout) before it counts as hung.
        let append = await Self.within(.seconds(5)) {
            try await store.append(time: 2, type: "didExitRegion", region: "door", state: "outside", reason: nil, json: "{}", hooks: [])
        }
        let read = await Self.within(.seconds(5)) { try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil) }
        let round = await Self.within(.seconds(5)) { try await store.balanceLeases(member: "m", partitions: 4, ttl: 3, reclaimOnly: false) }
        for (what, outcome) in [("append", append.map { ($0.0.map { _ in () }, $0.1) }), ("read", read.map { ($0.0.map { _ in () }, $0.1) }),
                                ("lease round", round.map { ($0.0.map { _ in () }, $0.1) })] {
            guard let (result, took) = outcome else {
                Issue.record("\(what) on a frozen server did not return within 5 s (operation timeout 1 s)")
                continue
            }
            #expect(took < .seconds(3), "\(what) gave up after \(took)")
            print("postgres-frozen: \(what) gave up after \(String(format: "%.2f", took.inSeconds)) s (operation timeout 1 s)")
            switch result {
            case .success: Issue.record("\(what) succeeded on a frozen server")
            case .failure(let error):
                let message = (error as? RegionKitError)?.message ?? "\(error)"
                #expect((error as? RegionKitError)?.code == .storeFailed && message.contains("no answer within"), "\(what): \(message)")
            }
        }

        // Thawed: the store works again (new connections if the old ones are stuck), and the
        // event accepted before the freeze is there.
        for pid in Self.tree(postmaster) { kill(pid, SIGCONT) }
        let recovered = await waitUntil(timeout: 30) {
            (try? await store.append(time: 3, type: "didExitRegion", region: "door", state: "outside", reason: nil, json: "{}", hooks: [])) != nil
        }
        #expect(recovered, "no append succeeded within 30 s of SIGCONT")
        let ids = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).map(\.id)
        #expect(ids.contains(accepted), "the event accepted before the freeze: \(ids)")
        await store.shutdown()
    }
}
