import Testing
import RegionKitConcurrency
@testable import RegionKitHTTP

/// Event-stream catch-ups read the store one page at a time across every stream, in the order
/// they asked, so other requests are not queued behind a hundred of them.
@Suite("Store read limiter")
struct StoreReadLimiterTests {
    @Test("Forty readers at once: never more than the permits hold the store, every reader gets its turn, a failing body gives its permit back",
          .timeLimit(.minutes(1)))
    func permits() async throws {
        for permits in [1, 3] {
            let limiter = StoreReadLimiter(permits: permits)
            let inside = LockedBox((now: 0, most: 0, done: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        do {
                            try await limiter.withPermit {
                                inside.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                                try await Task.sleep(for: .milliseconds(2))
                                inside.withLock { $0.now -= 1; $0.done += 1 }
                                if index % 7 == 0 { throw CancellationError() }
                            }
                        } catch is CancellationError {}
                    }
                }
                try await group.waitForAll()
            }
            let seen = inside.withLock { $0 }
            #expect(seen.done == 40 && seen.now == 0, "\(seen)")
            #expect(seen.most == permits, "at most \(permits) at once, and the permits were used: \(seen.most)")
            #expect(await limiter.mostHeld == permits)
        }
    }
}
