import RegionKitHTTP
import RegionKitStore
import RegionKitTestSupport
import Testing

/// The fan-out behind the SSE streams: live subscribers get each logged event, `finishAll()` ends
/// them, and a subscription made after it (a request racing the server's stop) ends at once —
/// before, it stayed open and held the graceful shutdown, and with it the daemon's stop.
@Suite("Event broadcaster: fan-out to the event streams, and their end at shutdown")
struct EventBroadcasterTests {
    static func event(_ id: Int64) -> StoredEvent {
        StoredEvent(id: id, time: Double(id), type: "didDetermineState", region: "lobby", state: "inside", reason: nil,
                    json: #"{"t":\#(id),"type":"didDetermineState","region":"lobby","state":"inside"}"#)
    }

    @Test("Subscribers get every event published while they listen; finishAll ends them; a later subscription ends at once",
          .timeLimit(.inProcess))
    func finishAllEndsEveryStream() async {
        let events = EventBroadcaster()
        let first = events.subscribe()
        let second = events.subscribe()
        #expect(events.subscriberCount == 2)
        events.publish(Self.event(1))
        events.publish(Self.event(2))
        events.finishAll()
        var seen: [[Int64]] = []
        for stream in [first, second] {
            var ids: [Int64] = []
            for await event in stream { ids.append(event.id) }   // ends: finished after the two events
            seen.append(ids)
        }
        #expect(seen == [[1, 2], [1, 2]])
        #expect(events.subscriberCount == 0)

        // After the stop began: the stream is already finished (no event, no wait), and nothing
        // is left registered for a later publish.
        let late = events.subscribe()
        var lateIDs: [Int64] = []
        for await event in late { lateIDs.append(event.id) }
        #expect(lateIDs.isEmpty)
        events.publish(Self.event(3))
        #expect(events.subscriberCount == 0)
    }
}
