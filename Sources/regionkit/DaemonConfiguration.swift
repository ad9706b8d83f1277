import Foundation
import RegionKit
import RegionKitService
import RegionKitSimulation
import Yams

/// The `regionkit run` configuration file (YAML or JSON).
///
/// ```yaml
/// store: /var/lib/regionkit/regionkit.sqlite
/// profile: responsive
/// distanceModel: /etc/regionkit/model.json   # from `regionkit calibrate` (optional)
/// regions:
///   - {identifier: lobby, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1}
/// sources:
///   - simulator: {scenario: museum, speed: 1, repeat: true}
///   - gateway: {file: /data/run.json.gz, speed: 1}
///   - hci: {device: hci0, scannerID: lobby}
///   - gpsd: {host: 127.0.0.1, port: 2947}
/// hooks:
///   onEnter: ["logger -t regionkit entered $REGIONKIT_REGION"]
///   webhooks: [{url: "http://127.0.0.1:8080/events"}]
/// ```
struct DaemonConfiguration: Decodable, Sendable {
    struct Source: Decodable, Sendable {
        struct Simulator: Decodable, Sendable {
            /// A built-in scenario name or a scenario file; its beacons, path and actions feed the sightings.
            var scenario: String
            var speed: Double?
            var `repeat`: Bool?
            var seed: UInt64?
        }

        struct Gateway: Decodable, Sendable {
            var file: String
            var speed: Double?
            var reorderWindow: Double?
        }

        /// A Bluetooth controller: `hci0`, `tcp:HOST:PORT` or `serial:PATH[:BAUD]`.
        struct HCI: Decodable, Sendable {
            var device: String
            /// Reported as the scanner of each sighting (a room, for scanner-bound regions).
            var scannerID: String?
        }

        /// A gpsd daemon (default 127.0.0.1:2947): fixes for the circular regions.
        struct GPSD: Decodable, Sendable {
            var host: String?
            var port: UInt16?
        }

        var simulator: Simulator?
        var gateway: Gateway?
        var hci: HCI?
        var gpsd: GPSD?
    }

    var store: String?
    var profile: String?
    /// A distance model file from `regionkit calibrate`: its model and RSSI filter replace the profile's.
    var distanceModel: String?
    var automation: Automation?
    var regions: [Scenario.RegionSpec]?
    var sources: [Source]
    var hooks: HookConfiguration?

    static func load(_ path: String) throws -> DaemonConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RegionKitError(.invalidArgument, "\(path): cannot read the configuration file")
        }
        let configuration: DaemonConfiguration
        do {
            configuration = try YAMLDecoder().decode(DaemonConfiguration.self, from: String(decoding: data, as: UTF8.self))
        } catch let error as DecodingError {
            throw RegionKitError(.malformedInput, "\(path): \(Scenario.describe(error))")
        } catch {
            throw RegionKitError(.malformedInput, "\(path): not valid YAML or JSON", cause: error)
        }
        try configuration.validate(path)
        return configuration
    }

    /// The configured profile with the configured distance model file applied.
    func monitoringProfile(_ path: String) throws -> MonitoringProfile {
        var chosen = profile.flatMap(MonitoringProfile.named) ?? .responsive
        if let distanceModel {
            do {
                chosen.use(try DistanceModelFile.load(path: distanceModel))
            } catch let error as RegionKitError {
                throw RegionKitError(.malformedInput, "\(path): distanceModel: \(error.message)")
            }
        }
        return chosen
    }

    func validate(_ path: String) throws {
        func bad(_ message: String) -> RegionKitError { RegionKitError(.malformedInput, "\(path): \(message)") }
        if let profile, MonitoringProfile.named(profile) == nil { throw bad("profile '\(profile)' is not one of corelocation, altbeacon, responsive") }
        _ = try monitoringProfile(path)
        guard !sources.isEmpty else { throw bad("sources: give at least one source (simulator, gateway, hci or gpsd)") }
        for (index, source) in sources.enumerated() {
            let kinds = [source.simulator != nil, source.gateway != nil, source.hci != nil, source.gpsd != nil].filter { $0 }.count
            guard kinds == 1 else { throw bad("sources[\(index)] must be exactly one of: simulator, gateway, hci, gpsd") }
            if let speed = source.simulator?.speed ?? source.gateway?.speed, !(speed.isFinite && speed > 0) {
                throw bad("sources[\(index)].speed must be > 0")
            }
        }
        for (index, spec) in (regions ?? []).enumerated() {
            do { _ = try spec.region() } catch let error as RegionKitError { throw bad("regions[\(index)]: \(error.message)") }
        }
        for hook in hooks?.webhooks ?? [] {
            guard let url = URL(string: hook.url), url.scheme == "http" || url.scheme == "https" else {
                throw bad("hooks.webhooks: '\(hook.url)' is not an http(s) URL")
            }
        }
    }
}
