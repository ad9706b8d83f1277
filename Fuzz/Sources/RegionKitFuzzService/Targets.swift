import FuzzSupport

/// The daemon's service-layer targets: the run configuration (Yams), MQTT packets (NIO) and the
/// HTTP API's request bodies (Hummingbird module).
let targets: [FuzzTarget] = [
    FuzzTarget(name: "config", run: ConfigurationFuzz.run),
    FuzzTarget(name: "mqtt-packet", run: MQTTPacketFuzz.run),
    FuzzTarget(name: "http-region-body", run: HTTPRegionBodyFuzz.run),
]
