import FuzzSupport
import RegionKitEngine

/// Distance model files (JSON), then the model used the way the engine uses it.
enum DistanceModelFuzz {
    static func run(_ data: [UInt8]) {
        guard let file = try? DistanceModelFile(json: String(decoding: data, as: UTF8.self), source: "fuzz.json") else { return }
        var profile = MonitoringProfile.responsive
        profile.use(file)
        for rssi in [-127.0, -90, -59, -30, 0, 20] {
            for power in [-100.0, -59, 0] {
                if let distance = file.distanceModel.distance(rssi: rssi, measuredPower: power), distance.isNaN {
                    FuzzTarget.fail("\(file.distanceModel.name) gives NaN for rssi \(rssi), measured power \(power)")
                }
            }
        }
    }
}
