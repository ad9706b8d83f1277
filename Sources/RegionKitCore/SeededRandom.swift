import Foundation

/// A small, fast, seedable random generator (SplitMix64) so simulations and randomized tests are reproducible across
/// runs and platforms, with a Gaussian draw (Box–Muller).
///
/// ```swift
/// var random = SeededRandom(seed: 42)
/// random.uniform()              // same value every run
/// random.gaussian(sigma: 4)     // shadowing sample in dB
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    /// A generator derived from a seed and a stream number, independent of other streams.
    public init(seed: UInt64, stream: UInt64) {
        var mixer = SeededRandom(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        state = mixer.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Normal with mean 0 and standard deviation `sigma`.
    public mutating func gaussian(sigma: Double) -> Double {
        guard sigma > 0 else { return 0 }
        let u1 = max(uniform(), 1e-300)
        let u2 = uniform()
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
