import RegionKitEngine
/// A receiving device's RSSI offset against the receiver a distance model was calibrated with,
/// learned from a short recording at known distances (a user holding the phone 1 m from a beacon
/// for a minute, say).
///
/// The rule: each sample's RSSI goes through `filter` (causal, in time order); for each sample the
/// model is inverted at the true distance — the RSSI `r*` at which the base model, with the model
/// file's measured power, would estimate exactly that distance — and the sample's offset is
/// `filtered − r*`. The device offset is the **median** of those offsets (one deep fade or a
/// person walking between does not move it). Samples at distances the model cannot reach (a
/// clamped model's 0 m, say) say nothing about the offset and are skipped.
///
/// ```swift
/// let base = LinearDistanceModel(intercept: 1, slope: 0.1)
/// let samples = (0..<60).map { DistanceSample(time: Timestamp(seconds: Double($0)), rssi: -54, distance: 1) }
/// let learned = try DeviceOffsetCalibration.learn(model: base, measuredPower: -60, samples: samples, filter: .latest)
/// learned.offset // 6.0: this phone reads 6 dB stronger
/// ```
public struct DeviceOffsetCalibration: Hashable, Sendable {
    /// dB the device reads above the calibration receiver.
    public var offset: Double
    /// Samples that gave an offset.
    public var samples: Int
    /// The distinct true distances used, metres, ascending.
    public var distances: [Double]
    /// Median absolute deviation of the per-sample offsets around `offset`, dB (how steady the calibration was).
    public var spread: Double

    public init(offset: Double, samples: Int, distances: [Double], spread: Double) {
        self.offset = offset
        self.samples = samples
        self.distances = distances
        self.spread = spread
    }

    /// Learns the offset of the device that recorded `samples` for `model` used with `measuredPower`.
    /// - Throws: `.invalidArgument` when no sample is at a distance the model can estimate.
    public static func learn(model: any DistanceModel, measuredPower: Double, samples: [DistanceSample], filter: RSSIFilter) throws -> DeviceOffsetCalibration {
        try learn(model: model, measuredPower: measuredPower, samples: samples, filtered: filter.filtered(samples))
    }

    /// ``learn(model:measuredPower:samples:filter:)`` with the RSSI already smoothed (one per sample).
    public static func learn(model: any DistanceModel, measuredPower: Double, samples: [DistanceSample], filtered: [Double]) throws -> DeviceOffsetCalibration {
        guard filtered.count == samples.count else {
            throw RegionKitError(.invalidArgument, "device calibration: \(filtered.count) filtered RSSI values for \(samples.count) samples")
        }
        var inverse: [Int: Double?] = [:]
        var offsets: [Double] = []
        var distances = Set<Int>()
        for (sample, rssi) in zip(samples, filtered) where rssi.isFinite && rssi != 0 {
            let level = DistanceCalibration.level(sample.distance)
            let target: Double?
            if let known = inverse[level] {
                target = known
            } else {
                target = Self.rssi(of: model, at: sample.distance, measuredPower: measuredPower)
                inverse[level] = target
            }
            guard let target else { continue }
            offsets.append(rssi - target)
            distances.insert(level)
        }
        guard !offsets.isEmpty else {
            throw RegionKitError(.invalidArgument, "device calibration needs samples at a distance the model \(model.name) can estimate "
                + "(above its nearest estimate; 1 m is a good choice), got \(samples.count) samples none of which qualifies")
        }
        let offset = DistanceCalibration.quantile(offsets, 0.5)
        guard abs(offset) <= DeviceOffsetDistanceModel.maximumOffset else {
            throw RegionKitError(.invalidArgument, "device calibration: the learned offset \(offset) dB is beyond ±\(Int(DeviceOffsetDistanceModel.maximumOffset)) dB; "
                + "check the measured power and that the recording's distances are right")
        }
        let spread = DistanceCalibration.quantile(offsets.map { abs($0 - offset) }, 0.5)
        return DeviceOffsetCalibration(offset: offset, samples: offsets.count, distances: distances.sorted().map { Double($0) / 1000 }, spread: spread)
    }

    /// The RSSI at which `model` estimates `distance` with `measuredPower`, by bisection over
    /// −200...−0.01 dBm (every model RegionKit has gives a distance that does not shrink as the
    /// signal weakens); `nil` when the model never reaches that distance strictly inside the range
    /// (a linear model clamped at 0 m, asked for 0 m).
    public static func rssi(of model: any DistanceModel, at distance: Double, measuredPower: Double) -> Double? {
        var strong = -0.01, weak = -200.0
        guard distance.isFinite, let nearest = model.distance(rssi: strong, measuredPower: measuredPower),
              let farthest = model.distance(rssi: weak, measuredPower: measuredPower),
              nearest < distance, farthest > distance
        else { return nil }
        for _ in 0..<80 {
            let middle = (strong + weak) / 2
            guard let estimate = model.distance(rssi: middle, measuredPower: measuredPower) else { return nil }
            if estimate < distance { strong = middle } else { weak = middle }
        }
        return (strong + weak) / 2
    }
}
