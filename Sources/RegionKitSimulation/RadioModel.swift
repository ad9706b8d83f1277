import RegionKit
import Foundation

/// How advertisements reach the simulated scanner: log-distance path loss, Gaussian shadowing,
/// random loss and a sensitivity floor.
///
/// `rssi = measuredPower − 10 · n · log10(d / 1 m) + N(0, σ)`; a frame is lost with probability
/// `lossRate`, or when its RSSI is below `sensitivity`.
///
/// ```swift
/// let radio = RadioModel(pathLossExponent: 2.2, shadowingSigma: 3, lossRate: 0.1, sensitivity: -90)
/// var random = SeededRandom(seed: 1)
/// radio.receive(measuredPower: -59, distance: 4, random: &random) // e.g. -72, or nil when lost
/// ```
public struct RadioModel: Hashable, Sendable, Codable {
    /// Path-loss exponent n (2 in free space, 2–3 indoors).
    public var pathLossExponent: Double
    /// Standard deviation of log-normal shadowing, dB.
    public var shadowingSigma: Double
    /// Probability that a frame is not received at all.
    public var lossRate: Double
    /// Weakest RSSI the scanner reports, dBm.
    public var sensitivity: Double

    public init(pathLossExponent: Double = 2.2, shadowingSigma: Double = 3, lossRate: Double = 0.1, sensitivity: Double = -90) {
        self.pathLossExponent = pathLossExponent
        self.shadowingSigma = shadowingSigma
        self.lossRate = lossRate
        self.sensitivity = sensitivity
    }

    /// Mean RSSI at `distance` metres (distances under 10 cm count as 10 cm).
    public func meanRSSI(measuredPower: Double, distance: Double) -> Double {
        measuredPower - 10 * pathLossExponent * log10(max(distance, 0.1))
    }

    /// One reception attempt: the RSSI in whole dBm, or `nil` when the frame is lost.
    public func receive(measuredPower: Double, distance: Double, random: inout SeededRandom) -> Int? {
        let lost = random.uniform() < lossRate
        let rssi = meanRSSI(measuredPower: measuredPower, distance: distance) + random.gaussian(sigma: shadowingSigma)
        guard !lost, rssi >= sensitivity else { return nil }
        // A receiver reports -127...20 dBm; the sum can be anything a file's values make it.
        return min(max(Int(saturating: rssi), -127), 20)
    }

    func validate(_ context: String) throws {
        guard pathLossExponent.isFinite, pathLossExponent > 0, pathLossExponent <= 10 else {
            throw RegionKitError(.malformedInput, "\(context): pathLossExponent \(pathLossExponent) must be within (0, 10]")
        }
        guard shadowingSigma.isFinite, (0...50).contains(shadowingSigma) else {
            throw RegionKitError(.malformedInput, "\(context): shadowingSigma \(shadowingSigma) must be within 0...50 dB")
        }
        guard lossRate.isFinite, (0...1).contains(lossRate) else {
            throw RegionKitError(.malformedInput, "\(context): lossRate \(lossRate) must be within 0...1")
        }
        guard sensitivity.isFinite, (-200...20).contains(sensitivity) else {
            throw RegionKitError(.malformedInput, "\(context): sensitivity \(sensitivity) must be within -200...20 dBm")
        }
    }
}
