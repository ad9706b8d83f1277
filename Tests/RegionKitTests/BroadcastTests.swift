import Testing
import RegionKitConcurrency
import RegionKitTestSupport

/// The fan-out behind the location manager's, the scanner's and the HTTP server's event streams.
@Suite("Broadcast: every subscriber's stream")
struct BroadcastTests {
    /// Everything a stream holds up to its end (the stream must end).
    static func drain(_ stream: AsyncStream<Int>) async -> [Int] {
        var seen: [Int] = []
        for await value in stream { seen.append(value) }
        return seen
    }

    @Test("Each subscriber gets what is yielded after it subscribed, then the last element and its end; a later subscription ends at once; finish twice: once",
          .timeLimit(.inProcess))
    func fanOut() async {
        let broadcast = Broadcast<Int>()
        let first = broadcast.subscribe()
        broadcast.yield(1)
        let second = broadcast.subscribe()
        #expect(broadcast.subscriberCount == 2)
        broadcast.snapshot().yield(2)
        #expect(broadcast.finish(last: 3))
        #expect(!broadcast.finish(last: 4), "finished already: nothing yielded")
        #expect(broadcast.subscriberCount == 0)
        #expect(await Self.drain(first) == [1, 2, 3])
        #expect(await Self.drain(second) == [2, 3])
        #expect(await Self.drain(broadcast.subscribe()) == [], "after the finish: ends at once")
    }

    @Test("A consumer that stops iterating is no subscriber any more; the buffering policy is the subscriber's",
          .timeLimit(.inProcess))
    func unsubscribe() async {
        let broadcast = Broadcast<Int>()
        let kept = broadcast.subscribe(bufferingPolicy: .bufferingNewest(2))
        do {
            let leaving = broadcast.subscribe()
            #expect(broadcast.subscriberCount == 2)
            let task = Task { for await _ in leaving {} }
            task.cancel()
            await task.value
        }
        // onTermination runs as the iteration is cancelled.
        #expect(broadcast.subscriberCount == 1)
        for value in 1...5 { broadcast.yield(value) }
        broadcast.finish()
        #expect(await Self.drain(kept) == [4, 5], "the newest two")
    }

    @Test("Deallocated: every stream ends", .timeLimit(.inProcess))
    func endsWhenDeallocated() async {
        var broadcast: Broadcast<Int>? = Broadcast<Int>()
        let stream = broadcast!.subscribe()
        broadcast?.yield(7)
        broadcast = nil
        #expect(await Self.drain(stream) == [7])
    }
}
