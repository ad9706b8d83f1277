import Foundation
import Hummingbird
import RegionKitConcurrency
import RegionKitStore

/// One Server-Sent Events stream: the events logged after `lastID` (read from the store), then
/// each new one as it is logged, every event exactly once and in id order.
///
/// A live notification whose id is not the next one (another writer committed in between, or this
/// subscriber's buffer dropped notifications) makes the stream read the gap back from the store,
/// so what a client receives is exactly the log after its `Last-Event-ID`.
struct EventStream: Sendable {
    let store: any RegionStoring
    let broadcaster: EventBroadcaster
    let filter: EventFilter
    let keepAlive: Duration
    var lastID: Int64

    static let page = 500

    /// One page read at a time across every stream's catch-up, the others waiting their turn in
    /// order. The SQLite store reads synchronously on the task's thread, and the cooperative pool
    /// has one thread per core: a hundred streams opened with a backlog (dashboards reconnecting
    /// together after a restart) kept every thread reading pages, and `GET /v1/regions` waited 19 s
    /// behind them. Held for one page at a time, so streams take turns and other requests get through.
    static let storeReads = AsyncSemaphore(permits: 1)

    func body() -> ResponseBody {
        let live = broadcaster.subscribe()   // before reading the backlog: nothing falls in between
        let stream = self
        return ResponseBody { writer in
            var last = stream.lastID
            // `retry` tells EventSource clients how long to wait before reconnecting (ms).
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            last = try await stream.catchUp(after: last, through: nil, writer: &writer)
            let (ticks, tick) = AsyncStream.makeStream(of: StoredEvent?.self, bufferingPolicy: .bufferingNewest(256))
            let merger = Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in live { tick.yield(event) }
                        tick.finish()
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: stream.keepAlive)
                            tick.yield(nil)
                        }
                    }
                    await group.next()
                    group.cancelAll()
                }
                tick.finish()
            }
            defer { merger.cancel() }
            // Wake-ups: a live event (usually the next one, written without a read) or a keep-alive.
            var pending: [StoredEvent] = []
            for await item in ticks {
                guard let event = item else {
                    // Also a safety net: anything logged but not notified is read back here.
                    last = try await stream.catchUp(after: last, through: nil, writer: &writer)
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    continue
                }
                pending.append(event)
                while let next = pending.first {
                    pending.removeFirst()
                    if next.id <= last { continue }
                    if next.id == last + 1 {
                        if stream.filter.accepts(next) { try await writer.write(Self.frame(next)) }
                        last = next.id
                    } else {
                        last = try await stream.catchUp(after: last, through: next.id, writer: &writer)
                    }
                }
            }
            try await writer.finish(nil)
        }
    }

    /// Writes the stored events after `last` (up to `through` when given), returns the new last id.
    func catchUp(after start: Int64, through end: Int64?, writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var last = start
        while true {
            // One page at a time across every stream (storeReads): the others' requests get through.
            let (after, store) = (last, store)
            let events = try await Self.storeReads.withPermitUnlessCancelled {
                try await store.events(since: nil, region: nil, type: nil, afterID: after, limit: Self.page)
            }
            var done = events.count < Self.page
            for event in events {
                if let end, event.id > end { done = true; break }
                if filter.accepts(event) { try await writer.write(Self.frame(event)) }
                last = event.id
            }
            if done { return last }
        }
    }

    static func frame(_ event: StoredEvent) -> ByteBuffer {
        var text = "id: \(event.id)\nevent: \(event.type)\ndata: "
        text += String(decoding: EventRepresentation.data(event), as: UTF8.self)
        text += "\n\n"
        return ByteBuffer(string: text)
    }
}
