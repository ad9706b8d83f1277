import RegionKitCore

/// Puts timestamped inputs back in time order when they arrive out of order by up to `window`
/// seconds, as gateway uploads do (each scanner batches its own sightings: the four-scanner
/// recording has 70 % of sightings late by up to 1.8 s). An input is released once the newest
/// time seen is `window` seconds past it; ties keep arrival order.
///
/// The engine cannot take back an exit fired because one scanner's batch arrived before another's,
/// so inputs that may be out of order go through this first.
///
/// Inlinable: it is generic and its users are in other modules (the replay command, the daemon's
/// gateway source), where an unspecialised call cost every input generic metadata lookups and
/// value witnesses (≈ 12 % of an instant replay). The `release:` forms hand each released input
/// to a closure instead of building an array per insert.
///
/// ```swift
/// var buffer = ReorderBuffer<BeaconObservation>(window: 2)
/// buffer.insert(late, at: late.timestamp) { manager.ingest($0) }
/// buffer.drain { manager.ingest($0) }   // at the end
/// ```
public struct ReorderBuffer<Element: Sendable>: Sendable {
    /// Ordered by time, then arrival (the sequence is unique, so it alone decides equality).
    @usableFromInline
    struct Entry: Comparable, Sendable {
        @usableFromInline var time: Timestamp
        @usableFromInline var sequence: Int
        @usableFromInline var element: Element

        @inlinable
        init(time: Timestamp, sequence: Int, element: Element) {
            self.time = time
            self.sequence = sequence
            self.element = element
        }

        @inlinable
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.time < rhs.time || (lhs.time == rhs.time && lhs.sequence < rhs.sequence)
        }

        @inlinable
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.sequence == rhs.sequence }
    }

    /// Seconds of lateness tolerated.
    public let window: Double
    @usableFromInline var heap = MinHeap<Entry>()
    @usableFromInline var sequence = 0
    @usableFromInline var newest: Timestamp?
    /// Inputs that arrived later than the window allows (released at once, out of order).
    public var tooLate: Int { lateInputs }
    @usableFromInline var lateInputs = 0
    @usableFromInline var lastReleased: Timestamp?

    /// The most inputs held at once: past it the earliest is released before its window has
    /// passed (inputs all at one time, 3 M identical sightings in 1 MB of gzip, were all held).
    public let capacity: Int
    /// Inputs released early because ``capacity`` was reached.
    public var releasedEarly: Int { earlyReleases }
    @usableFromInline var earlyReleases = 0

    public init(window: Double, capacity: Int = 1 << 18) {
        self.window = max(0, window)
        self.capacity = max(1, capacity)
    }

    @inlinable
    public var count: Int { heap.count }

    /// Adds an input and returns the inputs now old enough to release, in time order.
    @inlinable
    public mutating func insert(_ element: Element, at time: Timestamp) -> [Element] {
        var released: [Element] = []
        insert(element, at: time) { released.append($0) }
        return released
    }

    /// Adds an input and calls `release` with each input now old enough to release, in time order.
    @inlinable
    public mutating func insert<Failure: Error>(
        _ element: Element, at time: Timestamp, release: (Element) throws(Failure) -> Void
    ) throws(Failure) {
        if let lastReleased, time < lastReleased { lateInputs += 1 }
        heap.push(Entry(time: time, sequence: sequence, element: element))
        sequence += 1
        let newest = Swift.max(self.newest ?? time, time)
        self.newest = newest
        try self.release(upTo: newest - window, release)
        while heap.count > capacity, let top = heap.min {
            heap.popMin()
            lastReleased = top.time
            earlyReleases += 1
            try release(top.element)
        }
    }

    /// Releases everything, in time order (end of input).
    @inlinable
    public mutating func drain() -> [Element] {
        var released: [Element] = []
        drain { released.append($0) }
        return released
    }

    /// Calls `release` with everything still held, in time order (end of input).
    @inlinable
    public mutating func drain<Failure: Error>(release: (Element) throws(Failure) -> Void) throws(Failure) {
        try self.release(upTo: Timestamp(seconds: .infinity), release)
    }

    @inlinable
    mutating func release<Failure: Error>(upTo horizon: Timestamp, _ body: (Element) throws(Failure) -> Void) throws(Failure) {
        while let top = heap.min, top.time <= horizon {
            heap.popMin()
            lastReleased = top.time
            try body(top.element)
        }
    }
}
