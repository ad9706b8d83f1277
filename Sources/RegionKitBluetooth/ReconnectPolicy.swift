/// How a ``BeaconScanner`` waits between attempts to reopen a failed transport: exponential
/// backoff from ``initialDelay`` doubling up to ``maximumDelay``, forever or for ``maximumAttempts``.
///
/// ```swift
/// let policy = ReconnectPolicy(initialDelay: 0.25, maximumDelay: 5)
/// policy.delay(beforeAttempt: 1) // 0.25
/// policy.delay(beforeAttempt: 3) // 1.0
/// policy.delay(beforeAttempt: 9) // 5.0
/// ```
public struct ReconnectPolicy: Hashable, Sendable {
    /// Seconds before the first attempt.
    public var initialDelay: Double
    /// Ceiling on the delay, seconds.
    public var maximumDelay: Double
    /// Attempts before giving up (the scanner then stays ``BeaconScanner/State/failed(_:)``); nil = forever.
    public var maximumAttempts: Int?

    /// Defaults: 0.25 s first, doubling, at most 4 s. The first retry comes quickly because a
    /// restarted controller process or re-plugged dongle is usually back within a second, and the
    /// manager's `Automation.Retry` (1 s × 5 by default, spec §5) must see the source come back
    /// while it is still retrying; the 4 s ceiling keeps later attempts inside that budget.
    public init(initialDelay: Double = 0.25, maximumDelay: Double = 4, maximumAttempts: Int? = nil) {
        self.initialDelay = initialDelay.isFinite && initialDelay >= 0 ? initialDelay : 0.25
        self.maximumDelay = maximumDelay.isFinite && maximumDelay >= self.initialDelay ? maximumDelay : self.initialDelay
        self.maximumAttempts = maximumAttempts
    }

    /// Never reconnect: the first failure is final.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// Seconds to wait before attempt `attempt` (1-based).
    public func delay(beforeAttempt attempt: Int) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        return min(maximumDelay, initialDelay * pow2(exponent))
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        for _ in 0..<Int(exponent) { value *= 2 }
        return value
    }
}
