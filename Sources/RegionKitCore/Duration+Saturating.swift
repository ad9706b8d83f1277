/// Conversions from seconds given as untrusted `Double`s (a speed divides them, a file gives
/// them) to a `Duration` that never traps: not-a-number and negative values become zero,
/// values beyond ``maximumSaturatingSeconds`` (about 31.7 years) become that.
///
/// ```swift
/// try await Task.sleep(for: .seconds(saturating: gap / speed))   // never traps, whatever gap and speed are
/// Duration.seconds(saturating: .infinity) == .seconds(Duration.maximumSaturatingSeconds)
/// ```
extension Duration {
    /// The longest duration ``seconds(saturating:)`` gives: 10⁹ seconds.
    public static let maximumSaturatingSeconds: Double = 1e9

    /// `seconds` as a duration, clamped to 0…``maximumSaturatingSeconds`` (NaN gives zero).
    public static func seconds(saturating seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }   // also NaN
        let clamped = min(seconds, maximumSaturatingSeconds)
        // 10⁹ s × 10⁹ ns/s = 10¹⁸ < Int64.max (9.2 × 10¹⁸): the conversion cannot trap.
        return .nanoseconds(Int64((clamped * 1e9).rounded()))
    }
}

extension FixedWidthInteger {
    /// `value` rounded to the nearest integer and clamped to this type's range (NaN gives zero):
    /// for numbers from files and options that only need to be in range, never to trap.
    ///
    /// ```swift
    /// Int(saturating: 1e300) == Int.max
    /// Int16(saturating: -40.6) == -41
    /// ```
    public init(saturating value: Double) {
        guard !value.isNaN else { self = 0; return }
        let rounded = value.rounded()
        if let exact = Self(exactly: rounded) {
            self = exact
        } else {
            self = rounded < 0 ? .min : .max
        }
    }
}
