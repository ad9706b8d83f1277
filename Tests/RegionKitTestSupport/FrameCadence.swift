/// The cadence of a stream of frames, judged by the median gap between consecutive arrivals
/// rather than by count ÷ span: a virtual controller (Bumble, a Python process) that is starved
/// of CPU for a moment delivers a few late frames, which pull a mean rate down (8.0/s for a
/// 100 ms beacon after a 25 ms average slip) but leave the median gap at the interval. A wrong
/// interval, lost frames (every other one: a 200 ms median) or undropped duplicates (half the
/// gaps ≈ 0: a median of ≈ 0 or ≈ half the interval) still move the median.
///
/// ```swift
/// let gap = try #require(FrameCadence.medianGap(frames.map(\.t)))
/// #expect(gap > 0.08 && gap < 0.15, "a 100 ms interval, but a median gap of \(gap) s")
/// ```
public enum FrameCadence {
    /// The median of the gaps between consecutive times (seconds, any origin; sorted first), or
    /// nil for fewer than 3 times (2 gaps).
    public static func medianGap(_ times: [Double]) -> Double? {
        guard times.count >= 3 else { return nil }
        let sorted = times.sorted()
        let gaps = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.sorted()
        return gaps.count % 2 == 1 ? gaps[gaps.count / 2] : (gaps[gaps.count / 2 - 1] + gaps[gaps.count / 2]) / 2
    }
}
