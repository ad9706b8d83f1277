import Foundation

extension Double {
    /// The text `String(format: "%.1f", self)` gives — the exact binary value rounded to tenths,
    /// ties to even, `-` kept on negative values that round to zero — without Foundation's
    /// formatter (≈ 1,600 instructions a call: it was a tenth of a geofence fix's cost, spent on
    /// the reason text of each crossing). Values of 10¹⁴ and more (near 2⁵² tenths the arithmetic
    /// below is no longer exact) and non-finite ones still go through `String(format:)`.
    ///
    /// ```swift
    /// 2.25.tenthsText   // "2.2" (a tie, to even)
    /// 0.35.tenthsText   // "0.3" (0.35 is stored as 0.34999…)
    /// (-0.04).tenthsText // "-0.0"
    /// ```
    var tenthsText: String {
        guard isFinite, magnitude < 1e14 else { return String(format: "%.1f", self) }
        let value = magnitude
        // value × 10 = scaled + residual exactly (the residual by a fused multiply-add).
        let scaled = value * 10
        let residual = (-scaled).addingProduct(value, 10)
        let floor = scaled.rounded(.down)
        let fraction = scaled - floor   // exact: a multiple of scaled's ulp in [0, 1)
        // A fraction below one half stays below it with the residual added (|residual| ≤ half an
        // ulp, and the fraction is at least an ulp short of one half); at exactly one half the
        // residual's sign decides, and a true tie goes to the even neighbour.
        var tenths = floor
        if fraction > 0.5 || (fraction == 0.5 && (residual > 0 || (residual == 0 && floor.truncatingRemainder(dividingBy: 2) != 0))) {
            tenths += 1
        }
        let count = UInt64(tenths)
        return "\(sign == .minus ? "-" : "")\(count / 10).\(count % 10)"
    }
}
