import Foundation
import Testing
import RegionKit
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// The hook runner's retry backoff and polling, in virtual time: a test clock paces the runner and
/// the stored times read it, so a 70 s backoff schedule takes no real time.
@Suite("Hook retry backoff (virtual time)", .tags(.realTime))
struct HookBackoffTests {
    @Test("A failing delivery is retried at 0, 10, 30 and 70 s (retryDelay doubling), then given up", arguments: [
        // (maxAttempts, retryDelay, the virtual seconds of the attempts)
        (4, 10.0, [0, 10, 30, 70]),
        // The delay is capped at 60 s: 45, then 60 (not 90).
        (3, 45.0, [0, 45, 105]),
        // A delay above the cap is the delay (it was silently 60 s).
        (3, 90.0, [0, 90, 180]),
        (1, 10.0, [0]),
    ])
    func backoff(maxAttempts: Int, retryDelay: Double, expected: [Int]) async throws {
        let store = try RegionStore(path: temporaryStorePath())
        let clock = TestClock()
        let origin = 1_700_000_000.0
        // An event with one delivery to a configured webhook that is no http(s) URL: every
        // attempt fails at once, without a process or a socket.
        _ = try store.append(time: origin, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: ["webhook:ftp://nowhere/"])
        let configuration = HookConfiguration(webhooks: [.init(url: "ftp://nowhere/")], maxAttempts: maxAttempts, retryDelay: retryDelay)
        let runner = HookRunner(store: store, configuration: configuration,
                                now: { origin + clock.now.offset / .seconds(1) }, clock: clock)
        let running = Task { await runner.run(pollInterval: 1) }
        var attemptTimes: [Int] = []
        var seen = 0
        for second in 0...(expected.last ?? 0) + 30 {
            try await clock.waitForSleepers(1) // the runner finished its pass at this second and sleeps
            let attempts = try #require(try store.deliveries().first).attempts
            attemptTimes += Array(repeating: second, count: attempts - seen)
            seen = attempts
            clock.advance(by: .seconds(1))
        }
        running.cancel()
        await running.value
        #expect(attemptTimes == expected)
        let delivery = try #require(try store.deliveries().first)
        #expect(delivery.status == .failed)
        #expect(delivery.lastError == "'\(HookConfiguration.redacted("ftp://nowhere/"))' is not an http(s) URL")
    }

    @Test("Cancelling the runner ends its wait at once (no poll interval to sit out)")
    func cancellation() async throws {
        let clock = TestClock()
        let runner = HookRunner(store: try RegionStore(path: temporaryStorePath()), configuration: HookConfiguration(), clock: clock)
        let running = Task { await runner.run(pollInterval: 3600) }
        try await clock.waitForSleepers(1)
        running.cancel()
        await running.value
        #expect(clock.sleepers == 0)
    }
}
