import FuzzSupport
import RegionKitEngine
import RegionKitEvaluation

/// CSV distance samples (`time,rssi,distance`), then a calibration fit over them. Invariants from the
/// parser's contract: every sample is finite, distances are not negative, time never goes backwards.
enum DistanceSamplesFuzz {
    static func run(_ data: [UInt8]) {
        guard let samples = try? DistanceSampleParser.parse(String(decoding: data, as: UTF8.self), source: "fuzz.csv") else { return }
        for (index, sample) in samples.enumerated() {
            guard sample.rssi.isFinite, sample.distance.isFinite, sample.distance >= 0, sample.time.seconds.isFinite else {
                FuzzTarget.fail("sample \(index) \(sample) breaks the parser's contract")
            }
            if index > 0, sample.time < samples[index - 1].time { FuzzTarget.fail("time goes backwards at sample \(index)") }
        }
        guard samples.count <= 2_000 else { return }
        _ = try? DistanceCalibration.fit([samples], filter: .median(window: 5))
    }
}
