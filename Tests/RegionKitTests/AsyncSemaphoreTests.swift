import Testing
import RegionKitConcurrency
import RegionKitTestSupport

/// The semaphore behind the lease rounds, the region writes and the event streams' store reads:
/// at most its permits held, granted in request order, given back however the body ends.
@Suite("Async semaphore")
struct AsyncSemaphoreTests {
    @Test("Forty holders at once: never more than the permits, every one gets its turn, a failing body gives its permit back",
          .timeLimit(.inProcess))
    func permits() async throws {
        for permits in [1, 3] {
            let semaphore = AsyncSemaphore(permits: permits)
            let inside = LockedBox((now: 0, most: 0, done: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        do {
                            try await semaphore.withPermit {
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
            #expect(await semaphore.mostHeld == permits)
        }
    }

    @Test("Waiters get the permit in the order they asked", .timeLimit(.inProcess))
    func order() async throws {
        let semaphore = AsyncSemaphore()
        await semaphore.acquire()
        let order = LockedBox([Int]())
        var tasks: [Task<Void, Never>] = []
        for index in 0..<5 {
            tasks.append(Task { await semaphore.withPermit { order.withLock { $0.append(index) } } })
            while await semaphore.waiting < index + 1 { await Task.yield() }   // queued in turn
        }
        await semaphore.release()
        for task in tasks { await task.value }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(await semaphore.waiting == 0)
    }

    @Test("A task cancelled while it waits does not run its body and gives the permit back", .timeLimit(.inProcess))
    func cancelledWaiter() async throws {
        let semaphore = AsyncSemaphore()
        await semaphore.acquire()
        let ran = LockedBox(false)
        let waiter = Task { try await semaphore.withPermitUnlessCancelled { ran.withLock { $0 = true } } }
        while await semaphore.waiting < 1 { await Task.yield() }
        waiter.cancel()
        await semaphore.release()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(ran.withLock { $0 } == false)
        // The permit came back: the next holder gets it at once.
        let next = try await semaphore.withPermitUnlessCancelled { 42 }
        #expect(next == 42)
        #expect(await semaphore.mostHeld == 1)
    }
}
