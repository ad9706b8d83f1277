import RegionKitEngine
extension RSSIFilter {
    /// The filtered RSSI right after each sample of a time series, as ranging computes it: causal
    /// (only that sample and earlier ones), over the series' own timestamps.
    ///
    /// ```swift
    /// let smoothed = RSSIFilter.median(window: 5).filtered(samples)
    /// smoothed.count == samples.count // true
    /// ```
    public func filtered(_ samples: [DistanceSample]) -> [Double] {
        var state = RSSIFilterState()
        return samples.map { sample in
            add(sample.rssi, at: sample.time, to: &state)
            return value(of: state, at: sample.time) ?? sample.rssi
        }
    }
}
