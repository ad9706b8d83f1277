/// A `Duration` as a number of seconds, for arithmetic with `Double` times (backoff delays,
/// lease ages, benchmark rates). RegionKit's one such conversion: every module that waits or
/// measures depends on this one.
extension Duration {
    /// The duration in seconds, as a `Double` (attosecond parts included).
    ///
    /// ```swift
    /// Duration.milliseconds(1500).inSeconds   // 1.5
    /// (ContinuousClock.now - start).inSeconds // seconds since start
    /// ```
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
