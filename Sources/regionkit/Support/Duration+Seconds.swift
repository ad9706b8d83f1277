/// Durations as plain numbers for the benchmark tables.
extension Duration {
    /// The duration in seconds, as a `Double`.
    ///
    /// ```swift
    /// Duration.milliseconds(1500).inSeconds // 1.5
    /// ```
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
