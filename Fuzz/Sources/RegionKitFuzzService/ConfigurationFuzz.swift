import FuzzSupport
import RegionKitService

/// The daemon's run configuration (YAML or JSON text), decoded and validated.
enum ConfigurationFuzz {
    static func run(_ data: [UInt8]) {
        _ = try? ServiceConfiguration.decode(String(decoding: data, as: UTF8.self), path: "fuzz.yaml")
    }
}
