import RegionKitCore
/// RegionKit's calibratable model: distance grows linearly with the loss below the measured power,
/// `d = max(0, intercept + slope · (measuredPower − rssi))`.
///
/// Over the 0–3 m range that proximity classes care about, multipath and the three advertising
/// channels make RSSI undulate around a trend that is closer to a straight line in dB than to the
/// logarithmic path-loss curve (Herald's reference measurements reach the same conclusion), and a
/// straight line extrapolates gently where the power-law curves explode. `DistanceCalibration`
/// (RegionKitEvaluation) fits both parameters to samples at known distances.
///
/// ```swift
/// let model = LinearDistanceModel(intercept: 1.0, slope: 0.08)
/// model.distance(rssi: -69, measuredPower: -59) // 1.8 m
/// ```
public struct LinearDistanceModel: DistanceModel, Hashable, Codable {
    /// Metres at an RSSI equal to the measured power (≈ 1 m when the measured power is right).
    public var intercept: Double
    /// Metres per dB below the measured power.
    public var slope: Double

    public init(intercept: Double, slope: Double) {
        self.intercept = intercept
        self.slope = slope
    }

    public var name: String { "regionkit-linear" }

    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard rssi != 0, rssi.isFinite, measuredPower.isFinite else { return nil }
        return max(0, intercept + slope * (measuredPower - rssi))
    }
}
