import FuzzSupport

/// The daemon's service-layer targets: the run configuration (Yams), MQTT packets (NIO) and the
/// HTTP API's request bodies (Hummingbird module).
let targets: [FuzzTarget] = [
    FuzzTarget(name: "config", run: ConfigurationFuzz.run),
    FuzzTarget(name: "mqtt-packet", run: MQTTPacketFuzz.run),
    FuzzTarget(name: "http-region-body", run: HTTPRegionBodyFuzz.run),
]
let selected = FuzzTarget.select(from: targets)

/// Called by libFuzzer with each input; the target comes from `REGIONKIT_FUZZ_TARGET`.
let fuzzCallback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    guard let data else {
        selected.run([])
        return 0
    }
    selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
