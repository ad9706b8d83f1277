import RegionKit
import RegionKitHCI
import RegionKitSimulation

/// One entry of the service configuration's `sources:` list: where sightings and fixes come from.
/// Each entry is a map with exactly one key, the kind, whose value configures it:
///
/// ```yaml
/// sources:
///   - simulator: {scenario: museum, speed: 1, repeat: true}
///   - gateway: {file: /data/run.json.gz, speed: 1}
///   - hci: {device: hci0, scannerID: lobby}
///   - gpsd: {host: 127.0.0.1, port: 2947}
///   - mqtt: {format: espresense}          # needs the top-level mqtt: broker block
/// ```
///
/// ``SourceRunner`` feeds a source into a ``MonitoringService``.
///
/// Adding a kind: a case here with its settings type, a ``Kind`` case (its YAML key), one line in
/// ``init(from:)`` and in ``kind``, its rule in ``initialStatuses`` and ``problem``, and a
/// `SourceRunner+Kind.swift` with the loop that feeds it.
public enum ServiceSource: Hashable, Sendable {
    /// A simulated scenario's beacons, path and actions, in real time.
    case simulator(Simulator)
    /// A recorded gateway file replayed in real time (the source ends with the file).
    case gateway(Gateway)
    /// A Bluetooth controller scanning for iBeacons; reconnects by itself.
    case hci(HCI)
    /// A gpsd daemon's fixes, for the circular regions.
    case gpsd(GPSD)
    /// Sightings from scanners publishing to the `mqtt:` broker (ESPresense, Theengs, RegionKit
    /// scanners). All MQTT sources share the one connection of the ``PresenceHub``.
    case mqtt(MQTTSourceConfiguration)

    /// The key naming a source's kind in the configuration.
    public enum Kind: String, CaseIterable, CodingKey, Sendable {
        case simulator, gateway, hci, gpsd, mqtt
    }

    public struct Simulator: Hashable, Sendable, Codable {
        /// A built-in scenario name or a scenario file; its beacons, path and actions feed the sightings.
        public var scenario: String
        /// Virtual seconds per real second (default 1).
        public var speed: Double?
        /// Start over at the end of the scenario (default false: then the source idles).
        public var `repeat`: Bool?
        /// Random seed for the radio model (default: the scenario's).
        public var seed: UInt64?

        public init(scenario: String, speed: Double? = nil, repeat: Bool? = nil, seed: UInt64? = nil) {
            self.scenario = scenario
            self.speed = speed
            self.repeat = `repeat`
            self.seed = seed
        }
    }

    public struct Gateway: Hashable, Sendable, Codable {
        /// A gateway recording (JSON lines or concatenated JSON, optionally gzip-compressed).
        public var file: String
        /// Recorded seconds per real second (default 1).
        public var speed: Double?
        /// Seconds within which out-of-order sightings are put back in order (default 2).
        public var reorderWindow: Double?
        /// The longest recorded gap between two sightings that is waited out (default 60 s, like
        /// `regionkit replay --max-gap`); a longer one (a night without traffic, a far-future
        /// timestamp in a damaged file) is shortened to it, so the replay never sleeps for years
        /// (default: `ReplaySession.defaultMaximumGap`, the same as `regionkit replay`).
        public var maxGap: Double?

        public init(file: String, speed: Double? = nil, reorderWindow: Double? = nil, maxGap: Double? = nil) {
            self.file = file
            self.speed = speed
            self.reorderWindow = reorderWindow
            self.maxGap = maxGap
        }
    }

    /// A Bluetooth controller: `hci0`, `tcp:HOST:PORT` or `serial:PATH[:BAUD]`.
    public struct HCI: Hashable, Sendable, Codable {
        public var device: String
        /// Reported as the scanner of each sighting (a room, for scanner-bound regions).
        public var scannerID: String?
        /// Vendor beacon formats as Android Beacon Library layouts (`layouts: ["m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"]`),
        /// tried after iBeacon, AltBeacon and Eddystone; each optionally with the format its
        /// identities get (`"ibeacon:m:…"` or `{layout: "m:…", format: ibeacon}`, see ``BeaconLayoutSetting``).
        public var layouts: [BeaconLayoutSetting]?

        public init(device: String, scannerID: String? = nil, layouts: [BeaconLayoutSetting]? = nil) {
            self.device = device
            self.scannerID = scannerID
            self.layouts = layouts
        }

        /// The parsed layouts; the error names the layout's index and the term at fault.
        public func beaconLayouts() throws(RegionKitError) -> [BeaconLayout] {
            var parsed: [BeaconLayout] = []
            for (index, setting) in (layouts ?? []).enumerated() {
                do { parsed.append(try setting.beaconLayout()) } catch {
                    throw RegionKitError(.invalidArgument, "layouts[\(index)]: \(error.message)")
                }
            }
            return parsed
        }
    }

    /// A gpsd daemon (default 127.0.0.1:2947): fixes for the circular regions.
    public struct GPSD: Hashable, Sendable, Codable {
        public var host: String?
        public var port: UInt16?

        public init(host: String? = nil, port: UInt16? = nil) {
            self.host = host
            self.port = port
        }
    }

    /// A short name for status reports: `simulator:museum`, `gateway:run.json.gz`, `hci:hci0`, `gpsd:127.0.0.1:2947`.
    public var name: String {
        switch self {
        case .simulator(let settings): "simulator:\(settings.scenario)"
        case .gateway(let settings): "gateway:\(settings.file.split(separator: "/").last.map(String.init) ?? settings.file)"
        case .hci(let settings): "hci:\(settings.device)"
        case .gpsd(let settings): "gpsd:\(settings.host ?? "127.0.0.1"):\(settings.port ?? 2947)"
        case .mqtt: "mqtt"
        }
    }

    public var kind: Kind {
        switch self {
        case .simulator: .simulator
        case .gateway: .gateway
        case .hci: .hci
        case .gpsd: .gpsd
        case .mqtt: .mqtt
        }
    }

    /// A scenario that cannot be loaded (not built in, a file that is missing or malformed): said
    /// at the configuration's load, not when the source starts after the store was created.
    static func scenarioProblem(_ scenario: String) -> String? {
        do { _ = try Scenario.builtInOrFile(scenario) } catch { return "scenario: \((error as? RegionKitError)?.message ?? "\(error)")" }
        return nil
    }

    /// An HCI device the transport cannot parse (`hci0`, `tcp:HOST:PORT`, …), said at the load.
    static func deviceProblem(_ device: String) -> String? {
        do { _ = try HCITransportSpecification(parsing: device) } catch { return "device: \(error)" }
        return nil
    }

    /// The availability this source gives its region kinds before it has run: `.notDetermined`
    /// for a device that reports its own (a controller, gpsd), `.authorized` for one available
    /// from the start (a simulation, a file). A simulated scenario with a path on the map also
    /// feeds the circular regions.
    public var initialStatuses: [RegionKind: AuthorizationStatus] {
        switch self {
        case .simulator(let simulator):
            let geo = (try? Scenario.builtInOrFile(simulator.scenario).geo) != nil
            return geo ? [.beacon: .authorized, .circular: .authorized] : [.beacon: .authorized]
        case .gateway: return [.beacon: .authorized]
        case .hci: return [.beacon: .notDetermined]
        case .gpsd: return [.circular: .notDetermined]
        // Authorized once the broker accepts the connection (``PresenceHub``).
        case .mqtt: return [.beacon: .notDetermined]
        }
    }

    /// What is wrong with the settings (the field and the rule), or nil.
    public var problem: String? {
        switch self {
        case .simulator(let simulator): Self.speedProblem(simulator.speed) ?? Self.scenarioProblem(simulator.scenario)
        case .gateway(let gateway): Self.speedProblem(gateway.speed)
            ?? gateway.reorderWindow.flatMap { $0.isFinite && (0...3600).contains($0) ? nil : "reorderWindow \($0) must be within 0...3600 seconds" }
            ?? gateway.maxGap.flatMap { $0.isFinite && (0...86_400).contains($0) ? nil : "maxGap \($0) must be within 0...86400 seconds" }
        case .hci(let hci): hci.device.isEmpty ? "device must not be empty" : Self.deviceProblem(hci.device) ?? Self.layoutProblem(hci)
        case .gpsd(let gpsd):
            // Settings that can never connect fail the start, as an HCI device without a port does
            // (they used to be retried for ever as "source unavailable").
            if gpsd.port == 0 { "port 0 is not a port (gpsd listens on 2947 by default)" }
            else if let host = gpsd.host, host.allSatisfy(\.isWhitespace) { "host must not be empty (default 127.0.0.1)" }
            else { nil }
        case .mqtt(let mqtt): mqtt.problem
        }
    }

    private static func layoutProblem(_ hci: HCI) -> String? {
        do { _ = try hci.beaconLayouts(); return nil } catch { return error.message }
    }

    private static func speedProblem(_ speed: Double?) -> String? {
        guard let speed else { return nil }
        let range = SimulationRunner.paceRange
        return speed.isFinite && range.contains(speed) ? nil : "speed \(speed) must be within \(range.lowerBound)...\(Int(range.upperBound))"
    }
}

extension ServiceSource: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Kind.self)
        guard container.allKeys.count == 1, let kind = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "must be exactly one of: \(Kind.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        switch kind {
        case .simulator: self = .simulator(try container.decode(Simulator.self, forKey: kind))
        case .gateway: self = .gateway(try container.decode(Gateway.self, forKey: kind))
        case .hci: self = .hci(try container.decode(HCI.self, forKey: kind))
        case .gpsd: self = .gpsd(try container.decode(GPSD.self, forKey: kind))
        case .mqtt: self = .mqtt(try container.decode(MQTTSourceConfiguration.self, forKey: kind))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Kind.self)
        switch self {
        case .simulator(let settings): try container.encode(settings, forKey: .simulator)
        case .gateway(let settings): try container.encode(settings, forKey: .gateway)
        case .hci(let settings): try container.encode(settings, forKey: .hci)
        case .gpsd(let settings): try container.encode(settings, forKey: .gpsd)
        case .mqtt(let settings): try container.encode(settings, forKey: .mqtt)
        }
    }
}

