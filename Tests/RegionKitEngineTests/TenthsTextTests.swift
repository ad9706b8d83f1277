import Foundation
import Testing
@testable import RegionKitEngine

/// `Double.tenthsText`, the event reasons' seconds, against the formatter it replaces.
@Suite("Seconds in event reasons: tenthsText equals String(format: \"%.1f\")")
struct TenthsTextTests {
    /// Checks `tenthsText` and, with every digit count (the digits are written backwards into
    /// the string's storage), `tenthsText(prefix:suffix:)` with text around it: a non-ASCII
    /// prefix, an empty one, a one-character suffix.
    static func check(_ value: Double, _ failures: inout [String]) {
        let expected = String(format: "%.1f", value)
        if value.tenthsText != expected, failures.count < 10 {
            failures.append("\(value) (bits \(String(value.bitPattern, radix: 16))): \(value.tenthsText) vs \(expected)")
        }
        let framed = value.tenthsText(prefix: "held ⟨inside⟩ for ", suffix: " s")
        if framed != "held ⟨inside⟩ for \(expected) s", failures.count < 10 {
            failures.append("\(value) framed: \(framed) vs \(expected)")
        }
        let bare = value.tenthsText(prefix: "", suffix: "s")
        if bare != "\(expected)s", failures.count < 10 {
            failures.append("\(value) with a suffix only: \(bare) vs \(expected)")
        }
    }

    @Test("exact ties round to even; values just beside a tie round away from it")
    func ties() {
        var failures: [String] = []
        // Multiples of 1/4, 1/8, 1/16 and 1/32 times 10 can end in .5 exactly: true ties.
        for k in 0..<20_000 {
            for denominator in [4.0, 8.0, 16.0, 32.0] {
                let tie = Double(k) / denominator
                for value in [tie, tie.nextUp, tie.nextDown, -tie, -tie.nextUp] { Self.check(value, &failures) }
            }
        }
        // Decimal literals that are not stored exactly (0.35 is 0.34999…, 0.45 is 0.4500…01).
        for k in 0..<20_000 {
            let value = Double(k) / 100
            for v in [value, value.nextUp, value.nextDown, -value] { Self.check(v, &failures) }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("random values over every magnitude up to 10^14 and beyond, tiny, negative, zero, non-finite")
    func randomValues() {
        var failures: [String] = []
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200_000 {
            let exponent = Double.random(in: -30...16, using: &generator)
            let value = Double.random(in: 1..<10, using: &generator) * pow(10, exponent)
            Self.check(Bool.random(using: &generator) ? value : -value, &failures)
        }
        for value in [0.0, -0.0, 0.05, 0.049999999999999996, 0.95, 9.95, 99.95, 1e14, 1e14.nextDown, -1e14.nextDown, 1e15.nextDown, 2e17,
                      .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity, .nan] {
            Self.check(value, &failures)
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
