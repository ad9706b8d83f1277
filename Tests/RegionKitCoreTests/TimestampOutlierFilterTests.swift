import Testing
import RegionKitCore

/// A record far in time from both its neighbours is a damaged timestamp; a gap between two runs
/// of a recording is not.
@Suite("TimestampOutlierFilter")
struct TimestampOutlierFilterTests {
    static func kept(_ times: [Double], threshold: Double = 100) -> (kept: [Int], dropped: Int, first: Int?) {
        var filter = TimestampOutlierFilter<Int>(threshold: threshold)
        var kept: [Int] = []
        for (index, time) in times.enumerated() { filter.insert(index, time: time, offset: index * 10) { element, _ in kept.append(element) } }
        filter.finish { element, _ in kept.append(element) }
        return (kept, filter.dropped, filter.firstDropped?.offset)
    }

    @Test("One far time in the middle, first, or as a NaN is left out; its neighbours are kept, in order")
    func outliers() {
        #expect(Self.kept([1, 2, 1e12, 3, 4]) == ([0, 1, 3, 4], 1, 20))
        #expect(Self.kept([1e12, 1, 2, 3]) == ([1, 2, 3], 1, 0), "the first: far from the two after it, which agree")
        #expect(Self.kept([-1e12, 1, 2]) == ([1, 2], 1, 0))
        #expect(Self.kept([1, .nan, 2]) == ([0, 2], 1, 10))
        #expect(Self.kept([1, 2, 1e12, 3, -1e12, 4]) == ([0, 1, 3, 5], 2, 20))
    }

    @Test("A gap between two sessions, a last far record, a recording of one or two records, and small jitter are kept")
    func keptAsTheyAre() {
        #expect(Self.kept([1, 2, 3, 1_000, 1_001, 1_002]).kept == [0, 1, 2, 3, 4, 5], "the record after a gap is near the next")
        #expect(Self.kept([1, 2, 1_000]).kept == [0, 1, 2], "nothing after the last to tell")
        #expect(Self.kept([1_000, 1, 2]).dropped == 1 && Self.kept([1_000, 1]).dropped == 0, "two records: which is wrong cannot be told")
        #expect(Self.kept([5]).kept == [0] && Self.kept([]).kept.isEmpty)
        #expect(Self.kept([1, 50, 20, 90, 60]).dropped == 0)
        #expect(Self.kept([1e12, 1, 1e12 + 1, 2]).kept == [0, 2, 3], "alternating: the first is followed (nothing tells them apart)")
    }
}
