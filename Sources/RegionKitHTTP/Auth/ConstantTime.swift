/// Byte comparison whose time does not depend on where the inputs differ (only on their lengths).
///
/// ```swift
/// ConstantTime.equal(Array(presented.utf8), Array(expected.utf8))
/// ```
enum ConstantTime {
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        // Compare over the expected length whatever the presented length, so a wrong length costs
        // the same as a wrong byte.
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | UInt8(truncatingIfNeeded: (a.count ^ b.count) >> 8)
        for index in 0..<b.count {
            let x = index < a.count ? a[index] : 0
            difference |= x ^ b[index]
        }
        return difference == 0 && a.count == b.count
    }
}
