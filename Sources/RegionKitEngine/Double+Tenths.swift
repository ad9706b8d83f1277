import Foundation

extension Double {
    /// The text `String(format: "%.1f", self)` gives — the exact binary value rounded to tenths,
    /// ties to even, `-` kept on negative values that round to zero — without Foundation's
    /// formatter (≈ 1,600 instructions a call: it was a tenth of a geofence fix's cost, spent on
    /// the reason text of each crossing, a constant since; beacon exits' reasons still use it).
    /// Values of 10¹⁴ and more (near 2⁵² tenths the arithmetic below is no longer exact) and
    /// non-finite ones still go through `String(format:)`.
    ///
    /// ```swift
    /// 2.25.tenthsText   // "2.2" (a tie, to even)
    /// 0.35.tenthsText   // "0.3" (0.35 is stored as 0.34999…)
    /// (-0.04).tenthsText // "-0.0"
    /// ```
    var tenthsText: String { tenthsText(prefix: "", suffix: "") }

    /// ``tenthsText`` between `prefix` and `suffix`, written straight into the string's storage:
    /// an event's reason (`"no sighting for 12.5 s"`) without string interpolation, whose
    /// appends cost ≈ 2,900 instructions a reason, a quarter of a geofence crossing.
    ///
    /// ```swift
    /// 12.46.tenthsText(prefix: "no sighting for ", suffix: " s")   // "no sighting for 12.5 s"
    /// ```
    func tenthsText(prefix: StaticString, suffix: StaticString) -> String {
        guard isFinite, magnitude < 1e14 else { return "\(prefix)\(String(format: "%.1f", self))\(suffix)" }
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
        // At most 10¹⁵ tenths: at most 16 digits, the last after the point.
        let count = UInt64(tenths)
        var digits = 2
        var rest = count / 100
        while rest > 0 { digits += 1; rest /= 10 }
        let minus = sign == .minus ? 1 : 0
        // (Lengths through the buffers: `utf8CodeUnitCount` traps on a one-scalar `StaticString`.)
        let length = prefix.withUTF8Buffer(\.count) + minus + digits + 1 + suffix.withUTF8Buffer(\.count)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var at = 0
            prefix.withUTF8Buffer { text in
                for byte in text { buffer[at] = byte; at += 1 }
            }
            if minus == 1 { buffer[at] = UInt8(ascii: "-"); at += 1 }
            // The digits from the last: the tenth, the point, then the whole part.
            var value = count
            var position = at + digits
            buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            position -= 1
            buffer[position] = UInt8(ascii: ".")
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while position > at
            at += digits + 1
            suffix.withUTF8Buffer { text in
                for byte in text { buffer[at] = byte; at += 1 }
            }
            return at
        }
    }
}
