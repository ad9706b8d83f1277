/// Leaves out the records of a recording whose time is far from both of its neighbours: a
/// damaged timestamp (a flipped bit moves a time by years), which would otherwise become the
/// replay's origin (the first record) or jump the engine's clock ahead, collapsing the whole
/// recording into a moment.
///
/// A record is left out when its time is more than ``threshold`` from the last record kept and
/// from the next one; the first record of the recording, which has no record kept before it,
/// when it is that far from the next two, which agree with each other. A gap in a real recording
/// (two sessions joined) is kept: the record after it is near the one after it. The last record
/// is kept (nothing after it to tell).
///
/// ```swift
/// var filter = TimestampOutlierFilter<Int>(threshold: 86_400)
/// for (index, time) in [100.0, 101, 3e9, 102].enumerated() { filter.insert(index, time: time, offset: index) { kept, _ in print(kept) } }
/// filter.finish { kept, _ in print(kept) }   // 0, 1, 3: the record at 3e9 s is left out
/// ```
public struct TimestampOutlierFilter<Element> {
    /// The distance in time (the caller's unit) beyond which a record is far from another.
    public let threshold: Double
    private var pending: [(element: Element, time: Double, offset: Int)] = []
    private var lastKept: Double?
    /// Records left out.
    public private(set) var dropped = 0
    /// The first record left out: where it was (the caller's offset) and its time.
    public private(set) var firstDropped: (offset: Int, time: Double)?

    public init(threshold: Double) {
        self.threshold = threshold
    }

    /// Takes a record; `release` is called with the records decided kept, in order (a record is
    /// decided when one or two after it have arrived). Records left out are counted in
    /// ``dropped``.
    public mutating func insert(_ element: Element, time: Double, offset: Int, release: (Element, Double) throws -> Void) rethrows {
        pending.append((element, time, offset))
        try decide(finishing: false, release: release)
    }

    /// Releases the records still held (the end of the recording).
    public mutating func finish(release: (Element, Double) throws -> Void) rethrows {
        try decide(finishing: true, release: release)
    }

    private func far(_ a: Double, _ b: Double) -> Bool { !(abs(a - b) <= threshold) }

    private mutating func decide(finishing: Bool, release: (Element, Double) throws -> Void) rethrows {
        while let head = pending.first {
            var outlier = false
            if let lastKept {
                if pending.count >= 2 {
                    outlier = far(head.time, lastKept) && far(head.time, pending[1].time)
                } else if !finishing {
                    return
                }
            } else if pending.count >= 3 {
                outlier = far(head.time, pending[1].time) && far(head.time, pending[2].time) && !far(pending[1].time, pending[2].time)
            } else if !finishing {
                return
            }
            pending.removeFirst()
            if outlier {
                dropped += 1
                if firstDropped == nil { firstDropped = (head.offset, head.time) }
            } else {
                lastKept = head.time
                try release(head.element, head.time)
            }
        }
    }
}
