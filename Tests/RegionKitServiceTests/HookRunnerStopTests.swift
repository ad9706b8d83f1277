import Foundation
import Testing
import RegionKit
import RegionKitConcurrency
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// A stop arriving while a hook runs must not lose the record of its outcome: PostgreSQL's
/// bounded operations refuse work on a cancelled task, so a delivery recorded from the cancelled
/// runner stayed pending and ran again at the next start.
@Suite("Hook runner: outcomes recorded across a stop", .tags(.realTime))
struct HookRunnerStopTests {
    /// A store that cancels the runner's task when it reads the delivery's event (the stop arrives
    /// during the attempt) and, like the PostgreSQL store, refuses a write from a cancelled task.
    final class StoppingStore: InterposingStore, @unchecked Sendable {
        override func events(since: Double?, region: String?, type: String?, afterID: Int64?, limit: Int?) async throws -> [StoredEvent] {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await super.events(since: since, region: region, type: type, afterID: afterID, limit: limit)
        }

        override func markAttemptFailed(_ id: Int64, error: String, retryAt: Double?) async throws {
            if Task.isCancelled { throw CancellationError() }
            try await super.markAttemptFailed(id, error: error, retryAt: retryAt)
        }
    }

    /// A store that does not answer (PostgreSQL unreachable: 10 s an operation) must not hold a
    /// stop for its whole timeout: once the caller is cancelled, the write gets its grace only.
    @Test("A write outside cancellation holds a cancelled caller for its grace at most, and completes for one that is not cancelled")
    func uncancelledIsBounded() async throws {
        let started = ContinuousClock.now
        let waiting = Task {
            try await uncancelled(grace: .milliseconds(200)) { try await Task.sleep(for: .seconds(30)); return 1 }
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - started < .seconds(5), "the cancelled caller waited for the write's whole time")
        let answer = try await uncancelled(grace: .milliseconds(10)) { try await Task.sleep(for: .milliseconds(100)); return 2 }
        #expect(answer == 2, "a caller that is not cancelled waits for the write")
    }

    @Test("An attempt that ended as the runner was cancelled is still recorded")
    func outcomeRecordedAfterCancellation() async throws {
        let base = try RegionStore(path: temporaryStorePath())
        // A hook kind the runner does not know: the attempt fails at once, without a process.
        _ = try base.append(time: 1, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: ["bogus:target"])
        let runner = HookRunner(store: StoppingStore(base), configuration: HookConfiguration(maxAttempts: 5))
        let attempted = try await Task { try await runner.deliverDue() }.value
        #expect(attempted == 1)
        let delivery = try #require(try base.deliveries().first)
        #expect(delivery.attempts == 1 && delivery.lastError?.contains("unknown hook kind") == true, "\(delivery)")
    }
}
