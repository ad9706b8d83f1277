extension GPSDClient {
    /// Hands the worker's events to a stream that keeps the newest ``Configuration/eventBuffer``,
    /// counting those it drops for a slow consumer and telling it how many
    /// (``LocationInputError/Code/droppedEvents``) at the first yield that leaves room (before,
    /// the oldest were dropped without a word). Used on the worker thread only.
    ///
    /// ```swift
    /// var delivery = DropCountingDelivery(buffer: 4096)
    /// delivery.yield(.connected, to: continuation)
    /// delivery.finish(continuation)   // the last notice, if one is owed, then the end
    /// ```
    struct DropCountingDelivery {
        let buffer: Int
        /// Events dropped since the consumer was last told.
        private(set) var dropped = 0
        /// Whether the last yield left room in the buffer.
        private var room = true

        init(buffer: Int) {
            self.buffer = buffer
        }

        mutating func yield(_ event: Event, to continuation: AsyncStream<Event>.Continuation) {
            note(continuation.yield(event))
            if dropped > 0, room { tell(continuation) }
        }

        /// Says what was dropped, even into a full buffer (one more event goes, counted), and ends the stream.
        mutating func finish(_ continuation: AsyncStream<Event>.Continuation) {
            if dropped > 0 { tell(continuation) }
            continuation.finish()
        }

        private mutating func tell(_ continuation: AsyncStream<Event>.Continuation) {
            // One more dropped to make room for the notice is counted in it.
            let count = room ? dropped : dropped + 1
            let notice = LocationInputError(code: .droppedEvents, message:
                "\(count) event\(count == 1 ? "" : "s") dropped, oldest first: the consumer fell more than \(buffer) behind (Configuration.eventBuffer)")
            dropped = 0   // told (a drop to make room for the notice is counted in it)
            switch continuation.yield(.diagnostic(notice)) {
            case .enqueued(let remaining): room = remaining > 0
            case .dropped: room = false   // only a full buffer drops
            case .terminated: break
            @unknown default: break
            }
        }

        private mutating func note(_ result: AsyncStream<Event>.Continuation.YieldResult) {
            switch result {
            case .enqueued(let remaining): room = remaining > 0
            case .dropped: dropped += 1; room = false
            case .terminated: room = false
            @unknown default: break
            }
        }
    }
}
