import Foundation
import RegionKit
import RegionKitSimulation
import RegionKitGateway
import RegionKitMQTT
import Yams

/// The `regionkit run` configuration file (YAML or JSON): the store, the monitoring profile, the
/// regions, the sources (see ``ServiceSource``) and the hooks.
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
///   - mqtt: {format: espresense}                 # or theengs, regionkit; optional topic, scanner
/// mqtt: {url: "mqtt://127.0.0.1:1883", site: home}   # + username, passwordFile, caFile for mqtts://
/// homeAssistant: {discovery: true}
/// hooks:
///   onEnter: ["logger -t regionkit entered $REGIONKIT_REGION"]
///   webhooks: [{url: "http://127.0.0.1:8080/events"}]
/// http: {listen: "127.0.0.1:8080", tokenFile: /etc/regionkit/api-token, public: false}
/// ```
///
/// ```swift
/// let configuration = try ServiceConfiguration.load("/etc/regionkit/regionkit.yaml")
/// let profile = try configuration.monitoringProfile("/etc/regionkit/regionkit.yaml")
/// ```
///
/// Every error names the file and the field. A new top-level block is a property here (optional,
/// so older files stay valid) and, if it has rules, a check in ``validate(_:)``.
public struct ServiceConfiguration: Codable, Sendable {
    /// The store: a SQLite path or `postgres://user@host:port/database` (the password only in
    /// `$REGIONKIT_STORE_PASSWORD`). Default: `$REGIONKIT_STORE`, else `$XDG_DATA_HOME/regionkit/regionkit.sqlite`.
    public var store: String?
    /// corelocation, altbeacon or responsive (default responsive).
    public var profile: String?
    /// A distance model file from `regionkit calibrate`: its model and RSSI filter replace the profile's.
    public var distanceModel: String?
    /// Seconds of silence before any exit, whatever the profile would allow (for scanners that
    /// report in slow cycles: an OpenMQTTGateway node on its default settings reports a beacon
    /// about once a minute; give about twice its cycle). Off by default.
    /// See `ExitDetector.withMinimumSilence(_:)`.
    public var minimumExitSilence: Double?
    public var automation: Automation?
    public var regions: [Scenario.RegionSpec]?
    public var sources: [ServiceSource]
    public var hooks: HookConfiguration?
    /// The HTTP API, dashboard and metrics (off when absent); see ``HTTPSettings``.
    public var http: HTTPSettings?
    /// The MQTT broker for the `mqtt` sources and the presence outputs (``PresenceHub``).
    public var mqtt: MQTTHubConfiguration?
    /// Home Assistant MQTT discovery (needs `mqtt`).
    public var homeAssistant: HomeAssistantConfiguration?
    /// Cluster mode: this daemon is one engine of several sharing a PostgreSQL store, each taking
    /// partitions of the beacon sightings (see ``ClusterConfiguration`` and docs/cluster.md).
    public var cluster: ClusterConfiguration?
    /// How long the event log keeps events (off: everything is kept); see ``EventRetention``.
    public var retention: EventRetention?

    public init(store: String? = nil, profile: String? = nil, distanceModel: String? = nil, automation: Automation? = nil,
                regions: [Scenario.RegionSpec]? = nil, sources: [ServiceSource], hooks: HookConfiguration? = nil, http: HTTPSettings? = nil) {
        self.store = store
        self.profile = profile
        self.distanceModel = distanceModel
        self.automation = automation
        self.regions = regions
        self.sources = sources
        self.hooks = hooks
        self.http = http
    }

    /// The names each of the configuration's named values takes, by type name: a misspelt one
    /// is an error listing them (it said "Cannot initialize SightingMessageFormat from invalid
    /// String value espresence").
    static let choices: [String: [String]] = [
        "\(SightingMessageFormat.self)": SightingMessageFormat.allCases.map(\.rawValue),
        "\(BeaconAnnouncement.Scope.self)": BeaconAnnouncement.Scope.allCases.map(\.rawValue),
        "\(MQTTHubConfiguration.DepartureRetention.self)": MQTTHubConfiguration.DepartureRetention.allCases.map(\.rawValue),
        "\(HomeAssistantDiscovery.TrackerState.self)": HomeAssistantDiscovery.TrackerState.allCases.map(\.rawValue),
    ]

    /// Reads, decodes and validates the file at `path`.
    public static func load(_ path: String) throws -> ServiceConfiguration {
        guard UnreadableFile.reason(path) == nil, let data = FileManager.default.contents(atPath: path) else {
            throw RegionKitError(.invalidArgument, UnreadableFile.message(path, "cannot read the configuration file"))
        }
        return try decode(String(validatingUTF8: data, source: path), path: path)
    }

    /// Decodes and validates `text` (YAML or JSON); errors name `path`, the line and column
    /// (`path:line:column: …`) and the field. Unknown keys are errors.
    public static func decode(_ text: String, path: String) throws -> ServiceConfiguration {
        let configuration: ServiceConfiguration
        do {
            configuration = try StrictKeys.decode(ServiceConfiguration.self) { try YAMLDecoder().decode($0, from: text) }
        } catch DecodingError.dataCorrupted(let context) where context.underlyingError is YamlError {
            // YAMLDecoder wraps syntax errors: report them with their line and column.
            throw RegionKitError(.malformedInput, (context.underlyingError as? YamlError).map { YAMLLocation.describe($0, path: path) } ?? "\(path): not valid YAML")
        } catch let error as DecodingError {
            let place = YAMLLocation.of(error, in: text).map { "\(path):\($0.line):\($0.column)" } ?? path
            throw RegionKitError(.malformedInput, "\(place): \(Scenario.describe(error, choices: Self.choices))")
        } catch let error as YamlError {
            throw RegionKitError(.malformedInput, YAMLLocation.describe(error, path: path))
        } catch {
            throw RegionKitError(.malformedInput, "\(path): not valid YAML or JSON", cause: error)
        }
        try configuration.validate(path)
        return configuration
    }

    /// The configured profile with the configured distance model file applied. With sources that
    /// report many scanners (MQTT, gateway files), nearest-scanner (room) tracking is on, as in
    /// `regionkit replay`.
    public func monitoringProfile(_ path: String) throws -> MonitoringProfile {
        var chosen = profile.flatMap(MonitoringProfile.named) ?? .responsive
        if sources.contains(where: { $0.kind == .mqtt || $0.kind == .gateway }) {
            chosen.nearestScanner = chosen.nearestScanner ?? NearestScannerPolicy()
        }
        if let minimumExitSilence {
            guard minimumExitSilence.isFinite, Self.minimumExitSilenceRange.contains(minimumExitSilence) else {
                throw RegionKitError(.malformedInput, "\(path): minimumExitSilence must be within \(Self.minimumExitSilenceRange.lowerBound.compactDescription)...\(Self.minimumExitSilenceRange.upperBound.compactDescription) seconds, got \(minimumExitSilence.compactDescription)")
            }
            chosen.exitDetector = chosen.exitDetector.withMinimumSilence(minimumExitSilence)
            // A room holds as long: a scanner's track for the beacon is not let go sooner either.
            chosen.nearestScanner?.longestQuiet = minimumExitSilence
        }
        if let distanceModel {
            do {
                chosen.use(try DistanceModelFile.load(path: distanceModel))
            } catch let error as RegionKitError {
                throw RegionKitError(.malformedInput, "\(path): distanceModel: \(error.message)")
            }
        }
        return chosen
    }

    /// What ``minimumExitSilence`` may be: a second to an hour.
    public static let minimumExitSilenceRange = 1.0...3_600.0

    /// The configured regions, validated.
    public func monitoredRegions() throws -> [Region] {
        try (regions ?? []).map { try $0.region() }
    }

    /// The status of each region kind before the sources run (``MonitoringService``'s `sources:`),
    /// combined as ``SourceAvailability`` does: a source available from the start (a simulation, a
    /// file) makes its kinds available; a kind fed only by devices that report their own
    /// availability starts `.notDetermined`; kinds no source feeds are absent.
    public var initialSourceStatuses: [RegionKind: AuthorizationStatus] {
        SourceAvailability.combine(sources.map(\.initialStatuses))
    }

    /// Each source's name in status reports, parallel to ``sources``: ``ServiceSource/name``, with
    /// `#2`, `#3`… added to a name already taken (two simulations of one scenario).
    public var uniqueSourceNames: [String] {
        var seen: [String: Int] = [:]
        return sources.map { source in
            let name = source.name
            let count = (seen[name] ?? 0) + 1
            seen[name] = count
            return count > 1 ? "\(name)#\(count)" : name
        }
    }

    /// The MQTT sources, in file order.
    public var mqttSources: [MQTTSourceConfiguration] {
        sources.compactMap { if case .mqtt(let source) = $0 { source } else { nil } }
    }

    public func validate(_ path: String) throws {
        func bad(_ message: String) -> RegionKitError { RegionKitError(.malformedInput, "\(path): \(message)") }
        if let profile, MonitoringProfile.named(profile) == nil { throw bad("profile '\(profile)' is not one of \(MonitoringProfile.namesDescription)") }
        let chosenProfile = try monitoringProfile(path)
        guard !sources.isEmpty else {
            throw bad("sources: give at least one source (\(ServiceSource.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        for (index, source) in sources.enumerated() {
            if let problem = source.problem { throw bad("sources[\(index)].\(source.kind.rawValue).\(problem)") }
        }
        // A status filter is matched before every source's sighting filter: one that would take
        // another source's sightings (or its own) would turn them into rejected statuses.
        let mqttSources = sources.enumerated().compactMap { index, source -> (Int, MQTTSourceConfiguration)? in
            guard case .mqtt(let configuration) = source else { return nil }
            return (index, configuration)
        }
        for (index, source) in mqttSources {
            guard let status = source.statusFilter else { continue }
            if let (other, taken) = mqttSources.first(where: { MQTTSourceConfiguration.statusOverlaps(status, sightings: $0.1.sightingShape) }) {
                throw bad("sources[\(index)].mqtt.status '\(status)' would also take the sightings of sources[\(other)] ('\(taken.sightingShape)'): give a status topic of its own")
            }
        }
        // The hub's own topics must not come back as sightings: `site: scanners` made its events
        // and status `regionkit/scanners/events|status`, which a regionkit source's
        // `regionkit/scanners/+` took, each event read as a rejected batch.
        if let hub = mqtt {
            let topics = PresenceTopics(site: hub.siteName)
            let sample = BeaconIdentity(uuid: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), major: 1, minor: 1)
            let own = [topics.events, topics.status, topics.regionState("region"), topics.beaconRoom(sample), topics.beaconDistance(sample),
                       topics.beaconTracker(sample), topics.beaconAttributes(sample), topics.mqttRoom + "/room"]
            for (index, source) in mqttSources {
                for filter in [source.sightingShape] + (source.statusFilter.map { [$0] } ?? []) {
                    if let topic = own.first(where: { MQTTTopicFilter.matches(filter: filter, topic: $0) }) {
                        throw bad("sources[\(index)].mqtt: '\(filter)' would take the hub's own topic '\(topic)' (mqtt.site '\(hub.siteName)'): give the site another name, or the source another topic")
                    }
                }
            }
        }
        var identifiers: [String: Int] = [:]
        for (index, spec) in (regions ?? []).enumerated() {
            do {
                let region = try spec.region()
                try Region.validateNew(identifier: spec.identifier)
                // Refused here as the API refuses it (400): the daemon started, and the region
                // only failed (monitoringDidFail) in its log.
                if let refusal = chosenProfile.radiusRefusal(for: region) { throw refusal }
            } catch let error as RegionKitError { throw bad("regions[\(index)]: \(error.message)") }
            if let first = identifiers[spec.identifier] {
                throw bad("regions[\(index)].identifier '\(spec.identifier)' is already used by regions[\(first)]: region identifiers must be unique")
            }
            identifiers[spec.identifier] = index
        }
        if let mqtt {
            do { try mqtt.validate() } catch let error as RegionKitError { throw bad(error.message) }
        } else if let index = sources.firstIndex(where: { $0.kind == .mqtt }) {
            throw bad("sources[\(index)].mqtt needs the broker: add a top-level block like mqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}")
        }
        if homeAssistant != nil && mqtt == nil {
            throw bad("homeAssistant needs the broker: add a top-level block like mqtt: {url: \"mqtt://127.0.0.1:1883\", site: home}")
        }
        if let problem = homeAssistant?.problem { throw bad("homeAssistant.\(problem)") }
        if let problem = retention?.problem { throw bad("retention: \(problem)") }
        if let hooks {
            if let timeout = hooks.timeout, !(timeout.isFinite && (0.1...3600).contains(timeout)) { throw bad("hooks.timeout \(timeout) must be within 0.1...3600 seconds") }
            if let delay = hooks.retryDelay, !(delay.isFinite && (0...3600).contains(delay)) { throw bad("hooks.retryDelay \(delay) must be within 0...3600 seconds") }
            if let attempts = hooks.maxAttempts, !(1...1000).contains(attempts) { throw bad("hooks.maxAttempts \(attempts) must be within 1...1000") }
            if let pending = hooks.maxPending, !(1...10_000_000).contains(pending) { throw bad("hooks.maxPending \(pending) must be within 1...10000000") }
        }
        for (index, hook) in (hooks?.webhooks ?? []).enumerated() {
            guard let url = URL(string: hook.url), url.scheme == "http" || url.scheme == "https" else {
                throw bad("hooks.webhooks[\(index)].url: '\(String(HookConfiguration.redacted(hook.url).prefix(200)))' is not an http(s) URL")
            }
            // (`http://` alone parses: it failed only at the first delivery.)
            guard let host = url.host, !host.isEmpty else {
                throw bad("hooks.webhooks[\(index)].url: '\(String(HookConfiguration.redacted(hook.url).prefix(200)))' names no host")
            }
            // A misspelled or never-logged type delivered nothing, silently.
            if hook.events?.isEmpty == true {
                throw bad("hooks.webhooks[\(index)].events is empty: it would send nothing (leave it out for didEnterRegion and didExitRegion)")
            }
            for (position, type) in (hook.events ?? []).enumerated() {
                let place = "hooks.webhooks[\(index)].events[\(position)]"
                guard HookConfiguration.loggedEventTypes.contains(type) else {
                    let ranging = type == "didRangeBeacons" ? " (ranging is logged as rangedBeaconCountChanged, when the count changes)" : ""
                    throw bad("\(place): '\(type)' is not an event type the daemon logs\(ranging); "
                              + "one of \(HookConfiguration.loggedEventTypes.joined(separator: ", "))")
                }
                // A cluster delivers hooks for the merged region events and the beacons' rooms only.
                if cluster != nil, !HookConfiguration.clusterDeliveredEventTypes.contains(type) {
                    throw bad("\(place): a cluster delivers \(HookConfiguration.clusterDeliveredEventTypes.joined(separator: ", ")) to hooks, not '\(type)'")
                }
            }
        }
        if let http {
            do { try http.validate() } catch let error as RegionKitError { throw bad(error.message) }
        }
        if let cluster { try validateCluster(cluster, bad) }
    }

    /// Cluster mode's rules: partitioned ESPresense sightings through the broker, beacon regions,
    /// and none of the outputs a cluster does not serve (hooks, the events topic and Home
    /// Assistant's discovery it does: one member runs them; the HTTP API too: every member serves
    /// it from the shared store).
    func validateCluster(_ cluster: ClusterConfiguration, _ bad: (String) -> RegionKitError) throws {
        if let problem = cluster.problem { throw bad("cluster.\(problem)") }
        guard mqtt != nil else {
            throw bad("cluster needs the broker: add a top-level block like mqtt: {urls: [\"mqtt://nats-1:1883\", \"mqtt://nats-2:1883\"], site: airport}")
        }
        for (index, source) in sources.enumerated() {
            guard case .mqtt(let mqttSource) = source, mqttSource.format == .espresense else {
                throw bad("sources[\(index)]: cluster mode reads partitioned ESPresense sightings only: the source must be mqtt: {format: espresense}")
            }
            if mqttSource.topic != nil {
                throw bad("sources[\(index)].mqtt.topic: in cluster mode each partition's topic comes from cluster.topic")
            }
            if mqttSource.status != nil {
                throw bad("sources[\(index)].mqtt.status: in cluster mode the nodes' status topic comes from cluster.status")
            }
        }
        for (index, spec) in (regions ?? []).enumerated() where (try? spec.region())?.kind != .beacon {
            throw bad("regions[\(index)]: cluster mode partitions beacon sightings; circular regions need a location source, which is not partitioned")
        }
    }
}
