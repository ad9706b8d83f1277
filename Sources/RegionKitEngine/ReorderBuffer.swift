import RegionKitCore

/// Puts timestamped inputs back in time order when they arrive out of order by up to `window`
/// seconds, as gateway uploads do (each scanner batches its own sightings: the four-scanner
/// recording has 70 % of sightings late by up to 1.8 s). An input is released once the newest
/// time seen is `window` seconds past it; ties keep arrival order.
///
/// The engine cannot take back an exit fired because one scanner's batch arrived before another's,
/// so inputs that may be out of order go through this first.
///
/// ```swift
/// var buffer = ReorderBuffer<BeaconObservation>(window: 2)
/// for observation in buffer.insert(late, at: late.timestamp) { manager.ingest(observation) }
/// for observation in buffer.drain() { manager.ingest(observation) }   // at the end
/// ```
public struct ReorderBuffer<Element: Sendable>: Sendable {
    /// Ordered by time, then arrival (the sequence is unique, so it alone decides equality).
    private struct Entry: Comparable, Sendable {
        var time: Timestamp
        var sequence: Int
        var element: Element

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.sequence == rhs.sequence }
    }

    /// Seconds of lateness tolerated.
    public let window: Double
    private var heap = MinHeap<Entry>()
    private var sequence = 0
    private var newest: Timestamp?
    /// Inputs that arrived later than the window allows (released at once, out of order).
    public private(set) var tooLate = 0
    private var lastReleased: Timestamp?

    public init(window: Double) {
        self.window = max(0, window)
    }

    public var count: Int { heap.count }

    /// Adds an input and returns the inputs now old enough to release, in time order.
    public mutating func insert(_ element: Element, at time: Timestamp) -> [Element] {
        if let lastReleased, time < lastReleased { tooLate += 1 }
        heap.push(Entry(time: time, sequence: sequence, element: element))
        sequence += 1
        newest = max(newest ?? time, time)
        return release(upTo: newest! - window)
    }

    /// Releases everything, in time order (end of input).
    public mutating func drain() -> [Element] {
        release(upTo: Timestamp(seconds: .infinity))
    }

    private mutating func release(upTo horizon: Timestamp) -> [Element] {
        var released: [Element] = []
        while let top = heap.min, top.time <= horizon {
            heap.popMin()
            released.append(top.element)
            lastReleased = top.time
        }
        return released
    }
}
