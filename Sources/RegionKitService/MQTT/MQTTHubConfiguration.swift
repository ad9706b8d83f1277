import Foundation
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT

/// The `mqtt:` block of the daemon's configuration: one broker (`url`) or the nodes of a clustered
/// broker (`urls`, tried in order: see `MQTTClientConfiguration.servers`), used for the MQTT
/// sources and for the outputs. Credentials never come from the command line: the username may be
/// written here or in `REGIONKIT_MQTT_USERNAME`, the password only in `passwordFile` or
/// `REGIONKIT_MQTT_PASSWORD`.
///
/// ```yaml
/// mqtt: {url: "mqtts://broker.lan:8883", site: home, username: regionkit, passwordFile: /etc/regionkit/mqtt.pass, caFile: /etc/regionkit/ca.pem}
/// # or, for a NATS cluster's MQTT listeners:
/// mqtt: {urls: ["mqtt://nats-1:1883", "mqtt://nats-2:1883", "mqtt://nats-3:1883"], site: airport}
/// ```
public struct MQTTHubConfiguration: Codable, Sendable, Hashable {
    /// `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`: the broker, or the first of ``urls``.
    public var url: String
    /// The nodes of a clustered broker, in the order they are tried (the first is ``url``); `nil`
    /// for one broker. Written as `urls:` instead of `url:` in the configuration.
    public var urls: [String]?
    /// Names the output topics: `regionkit/<site>/…` (default `regionkit`).
    public var site: String?
    public var clientID: String?
    public var username: String?
    public var passwordFile: String?
    /// A PEM CA certificate for `mqtts://` (default: the system's trust roots).
    public var caFile: String?
    /// Seconds (default 30).
    public var keepAlive: Double?
    /// Publish every logged event on `regionkit/<site>/events` (default true).
    public var publishEvents: Bool?
    /// The events not yet logged above which the hub holds back its reads of sightings from the
    /// broker, until they are down to half and at most 0.5 s at a time (default
    /// ``PresenceHub/defaultMaximumBacklog``; ``maximumBacklogRange``); a cluster's partitions too.
    public var maximumBacklog: Int?
    /// What ``maximumBacklog`` may be.
    public static let maximumBacklogRange = 100...10_000_000
    /// Which beacons' departures (room `not_home`, distance `None`) stay retained on the broker:
    /// `announced` (the default: those with Home Assistant entities; any other beacon's topics are
    /// removed once it leaves, so identities that come and go leave nothing behind) or `all` (every
    /// beacon ever placed keeps its topics: for consumers that read them without discovery, such as
    /// device trackers configured in Home Assistant's YAML, at the cost of one retained topic per
    /// identity ever heard).
    public var retainDepartures: DepartureRetention?

    /// The values of ``retainDepartures``.
    public enum DepartureRetention: String, Codable, Sendable, Hashable, CaseIterable {
        case announced
        case all
    }

    /// Whether every beacon's departure stays retained (``retainDepartures`` `all`).
    public var retainsAllDepartures: Bool { retainDepartures == .all }
    /// Rejected with a clear message: the password belongs in `passwordFile` or the environment.
    var password: String?

    public init(url: String, site: String? = nil) {
        self.url = url
        self.site = site
    }

    /// Several brokers (the nodes of one cluster), tried in this order.
    public init(urls: [String], site: String? = nil) {
        self.url = urls.first ?? ""
        self.urls = urls
        self.site = site
    }

    enum CodingKeys: String, CodingKey {
        case url, urls, site, clientID, username, passwordFile, caFile, keepAlive, publishEvents, maximumBacklog, retainDepartures, password
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let url = try container.decodeIfPresent(String.self, forKey: .url)
        let urls = try container.decodeIfPresent([String].self, forKey: .urls)
        switch (url, urls) {
        case (let url?, nil):
            self.url = url
        case (nil, let urls?):
            guard let first = urls.first else {
                throw DecodingError.dataCorruptedError(forKey: .urls, in: container, debugDescription: "urls: needs at least one broker")
            }
            self.url = first
            self.urls = urls
        case (_?, _?):
            throw DecodingError.dataCorruptedError(forKey: .urls, in: container, debugDescription: "give either url or urls, not both")
        case (nil, nil):
            throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath,
                                                    debugDescription: "missing the broker: url (one) or urls (a cluster)"))
        }
        site = try container.decodeIfPresent(String.self, forKey: .site)
        clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
        username = try container.decodeIfPresent(String.self, forKey: .username)
        passwordFile = try container.decodeIfPresent(String.self, forKey: .passwordFile)
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        keepAlive = try container.decodeIfPresent(Double.self, forKey: .keepAlive)
        publishEvents = try container.decodeIfPresent(Bool.self, forKey: .publishEvents)
        maximumBacklog = try container.decodeIfPresent(Int.self, forKey: .maximumBacklog)
        if let text = try container.decodeIfPresent(String.self, forKey: .retainDepartures) {
            guard let retention = DepartureRetention(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .retainDepartures, in: container,
                                                       debugDescription: "'\(text.prefix(80))' is not one of announced, all")
            }
            retainDepartures = retention
        }
        password = try container.decodeIfPresent(String.self, forKey: .password)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let urls { try container.encode(urls, forKey: .urls) } else { try container.encode(url, forKey: .url) }
        try container.encodeIfPresent(site, forKey: .site)
        try container.encodeIfPresent(clientID, forKey: .clientID)
        try container.encodeIfPresent(username, forKey: .username)
        try container.encodeIfPresent(passwordFile, forKey: .passwordFile)
        try container.encodeIfPresent(caFile, forKey: .caFile)
        try container.encodeIfPresent(keepAlive, forKey: .keepAlive)
        try container.encodeIfPresent(publishEvents, forKey: .publishEvents)
        try container.encodeIfPresent(maximumBacklog, forKey: .maximumBacklog)
        try container.encodeIfPresent(retainDepartures, forKey: .retainDepartures)
    }

    /// Every broker to try, in order: ``urls``, or ``url`` alone.
    public var brokerURLs: [String] { urls ?? [url] }

    /// The brokers for logs and source names: `url`, or `url1,url2,…`.
    public var brokerDescription: String { brokerURLs.joined(separator: ",") }

    public var siteName: String { site ?? "regionkit" }

    /// The username and password to connect with: from this block, its password file and the environment.
    public func credentials(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (username: String?, password: String?) {
        let user = username ?? environment["REGIONKIT_MQTT_USERNAME"].flatMap { $0.isEmpty ? nil : $0 }
        var secret = environment["REGIONKIT_MQTT_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        if let passwordFile {
            guard let data = FileManager.default.contents(atPath: passwordFile) else {
                throw RegionKitError(.invalidArgument, "mqtt.passwordFile: cannot read \(passwordFile)")
            }
            // One line; a trailing newline (echo > file) is not part of the password.
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        if secret != nil && user == nil {
            throw RegionKitError(.invalidArgument, "mqtt: a password is set but no username (mqtt.username or REGIONKIT_MQTT_USERNAME)")
        }
        return (user, secret)
    }

    /// Checks what can be checked without connecting; messages name the field.
    public func validate() throws {
        func bad(_ message: String) -> RegionKitError { RegionKitError(.malformedInput, "mqtt.\(message)") }
        if password != nil {
            throw bad("password: do not write the password in the configuration; put it in a file named by mqtt.passwordFile (mode 0600) or in REGIONKIT_MQTT_PASSWORD")
        }
        // Errors repeat a URL, but never a password in it (which is refused: it would sit in the
        // config file and in process listings; username and password or a password file instead).
        func shown(_ text: String) -> String { MQTTClientConfiguration.redactingCredentials(text) }
        func refuseCredentials(_ text: String, _ field: String) throws {
            if shown(text) != text {
                throw bad("\(field) '\(shown(text))': credentials do not go in the URL: set username, and the password in passwordFile or REGIONKIT_MQTT_PASSWORD")
            }
        }
        try refuseCredentials(url, "url")
        if let urls {
            for (index, candidate) in urls.enumerated() { try refuseCredentials(candidate, "urls[\(index)]") }
            guard !urls.isEmpty else { throw bad("urls: needs at least one broker") }
            guard urls.count <= 64 else { throw bad("urls: at most 64 brokers (\(urls.count) given)") }
            for (index, candidate) in urls.enumerated() {
                guard candidate.hasPrefix("mqtt://") || candidate.hasPrefix("mqtts://") else {
                    throw bad("urls[\(index)] '\(shown(candidate))' must start with mqtt:// or mqtts://")
                }
            }
            guard Set(urls.map { $0.hasPrefix("mqtts://") }).count == 1 else {
                throw bad("urls: mix mqtt:// and mqtts://; the nodes of one cluster share the TLS settings")
            }
            guard url == urls[0] else { throw bad("url '\(shown(url))' and urls[0] '\(shown(urls[0]))' differ: give one of them") }
        }
        guard url.hasPrefix("mqtt://") || url.hasPrefix("mqtts://") else {
            throw bad("url '\(shown(url))' must start with mqtt:// or mqtts://")
        }
        // The client's own parse (host, port, no path), so a bad port stops the configuration's
        // load with its line, not the daemon after it created its store.
        for (field, candidate) in [("url", url)] + (urls ?? []).enumerated().map({ ("urls[\($0.offset)]", $0.element) }) {
            do { _ = try MQTTClientConfiguration(url: candidate) } catch {
                if case .invalidURL(let text, let reason) = error { throw bad("\(field) '\(text)': \(reason)") }
                throw bad("\(field): \(error)")
            }
        }
        if let site, site.isEmpty || site.utf8.count > 64 { throw bad("site must be 1–64 characters") }
        if let keepAlive, !(keepAlive.isFinite && keepAlive >= 1 && keepAlive <= 65535) { throw bad("keepAlive must be 1...65535 seconds") }
        if let maximumBacklog, !Self.maximumBacklogRange.contains(maximumBacklog) {
            throw bad("maximumBacklog \(maximumBacklog) must be within \(Self.maximumBacklogRange.lowerBound)...\(Self.maximumBacklogRange.upperBound) events")
        }
        if caFile != nil && !url.hasPrefix("mqtts://") { throw bad("caFile is only used with an mqtts:// url") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) { throw bad("caFile: cannot read \(caFile)") }
        if let passwordFile, !FileManager.default.isReadableFile(atPath: passwordFile) { throw bad("passwordFile: cannot read \(passwordFile)") }
    }
}

/// The `homeAssistant:` block: MQTT discovery of RegionKit's regions and beacons.
///
/// ```yaml
/// homeAssistant: {discovery: true, prefix: homeassistant, mqttRoom: true, beacons: regions, maximumBeacons: 200}
/// homeAssistant: {discovery: true, prefix: ha2, statusTopic: ha2/birth}   # Home Assistant's birth topic changed too
/// ```
public struct HomeAssistantConfiguration: Codable, Sendable, Hashable {
    public var discovery: Bool?
    /// Discovery prefix (default `homeassistant`).
    public var prefix: String?
    /// Also publish `mqtt_room`-compatible `{id, name, distance}` on `regionkit/<site>/mqtt_room/<room>`.
    public var mqttRoom: Bool?
    /// Which beacons get entities (``BeaconAnnouncement/Scope``; default `all`).
    public var beacons: BeaconAnnouncement.Scope?
    /// At most this many beacons get entities (default ``BeaconAnnouncement/defaultMaximum``).
    public var maximumBeacons: Int?
    /// Home Assistant's birth message topic, when it is not `homeassistant/status` (nor
    /// `<prefix>/status`): see ``HomeAssistantDiscovery/statusTopics``.
    public var statusTopic: String?
    /// What each beacon's `device_tracker` shows (``HomeAssistantDiscovery/TrackerState``;
    /// default `home`: `room` before version 0.2, through the `state_topic` Home Assistant deprecated).
    public var trackerState: HomeAssistantDiscovery.TrackerState?

    public init(discovery: Bool? = true, prefix: String? = nil, mqttRoom: Bool? = nil,
                beacons: BeaconAnnouncement.Scope? = nil, maximumBeacons: Int? = nil, statusTopic: String? = nil,
                trackerState: HomeAssistantDiscovery.TrackerState? = nil) {
        self.discovery = discovery
        self.prefix = prefix
        self.mqttRoom = mqttRoom
        self.beacons = beacons
        self.maximumBeacons = maximumBeacons
        self.statusTopic = statusTopic
        self.trackerState = trackerState
    }

    /// The announcement policy these settings give.
    public var beaconAnnouncement: BeaconAnnouncement {
        BeaconAnnouncement(scope: beacons ?? .all, maximum: maximumBeacons ?? BeaconAnnouncement.defaultMaximum)
    }

    /// The discovery these settings give (`nil` without `discovery: true`).
    public func discovery(topics: PresenceTopics) -> HomeAssistantDiscovery? {
        guard discovery == true else { return nil }
        return HomeAssistantDiscovery(topics: topics, prefix: prefix ?? "homeassistant", beacons: beaconAnnouncement, birthTopic: statusTopic,
                                      trackerState: trackerState ?? .home)
    }

    /// What is wrong with the settings, or nil.
    public var problem: String? {
        if let maximumBeacons, !(0...BeaconAnnouncement.largestMaximum).contains(maximumBeacons) {
            return "maximumBeacons \(maximumBeacons) must be within 0...\(BeaconAnnouncement.largestMaximum)"
        }
        if let prefix, prefix.isEmpty || prefix.contains("+") || prefix.contains("#") {
            return "prefix must be a non-empty topic without wildcards"
        }
        if let statusTopic {
            do { try MQTTTopicFilter.validateTopicName(statusTopic) } catch { return "statusTopic: \(error)" }
        }
        return nil
    }
}

/// One MQTT source: sightings in a scanner format on a topic filter of the `mqtt:` broker, and
/// its scanners' status (online, offline) on another.
///
/// ```yaml
/// sources:
///   - mqtt: {format: espresense}                                  # espresense/devices/+/+, status espresense/rooms/+/status
///   - mqtt: {format: theengs, topic: "home/+/BTtoMQTT/+", scanner: garage, status: "home/garage-gw/LWT"}
///   - mqtt: {format: espresense, status: none}                    # statuses not read
/// ```
public struct MQTTSourceConfiguration: Codable, Sendable, Hashable {
    public var format: SightingMessageFormat
    /// The subscription filter (default: the format's usual topics).
    public var topic: String?
    /// Report every sighting of this source as heard by this scanner (instead of the topic's room/gateway).
    public var scanner: String?
    /// Where the source's scanners say whether they are online (`ScannerStatusMessage`): a
    /// topic filter whose `+` level names the scanner (with ``scanner`` set, any topic: it is
    /// that scanner's); `none`: not read. Default: the format's
    /// (`SightingMessageFormat.defaultStatusFilter`) when the source reads the format's usual
    /// topics and names no scanner; otherwise none.
    public var status: String?

    public init(format: SightingMessageFormat, topic: String? = nil, scanner: String? = nil, status: String? = nil) {
        self.format = format
        self.topic = topic
        self.scanner = scanner
        self.status = status
    }

    public var topicFilter: String { topic ?? format.defaultTopicFilter }

    /// The filter the configuration's overlap checks judge the source's sightings by: its own,
    /// or its format's default for one with `#` (a broad subscription, other topics included on
    /// purpose: the shape of its format's sightings is what must stay apart).
    var sightingShape: String { topicFilter.contains("#") ? format.defaultTopicFilter : topicFilter }

    /// The scanners' status filter read (``status``), or nil when none is.
    public var statusFilter: String? {
        if let status { return status == Self.noStatus ? nil : status }
        return topic == nil && scanner == nil ? format.defaultStatusFilter : nil
    }

    /// The ``status`` value that reads no status.
    public static let noStatus = "none"

    /// What is wrong with the settings, or nil.
    public var problem: String? {
        do {
            try MQTTTopicFilter.validateFilter(topicFilter)
        } catch {
            return "topic: \(error)"
        }
        if let scanner, let problem = ScannerName.problem(scanner) { return "scanner \(problem)" }
        return Self.statusProblem(statusFilter, scanner: scanner)
    }

    /// What is wrong with a status filter (``statusFilter``) read for a source whose configured
    /// scanner is `scanner`, or nil: a valid filter without `#`, whose one `+` level names the
    /// scanner unless the source names one (two would leave which one unsaid).
    static func statusProblem(_ filter: String?, scanner: String?) -> String? {
        guard let filter else { return nil }
        do {
            try MQTTTopicFilter.validateFilter(filter)
        } catch {
            return "status: \(error)"
        }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        if levels.contains("#") { return "status '\(filter)': no '#': one '+' level names the scanner" }
        if scanner == nil && levels.filter({ $0 == "+" }).count != 1 {
            return "status '\(filter)': one '+' level must name the scanner (or give the source a scanner)"
        }
        return nil
    }

    /// Whether status filter `status` would also take messages of sighting filter `sightings`
    /// (statuses are routed first): some topic matches both. `espresense/devices/+/kitchen`
    /// would take the kitchen's ESPresense sightings.
    public static func statusOverlaps(_ status: String, sightings: String) -> Bool {
        let (a, b) = (status.split(separator: "/", omittingEmptySubsequences: false), sightings.split(separator: "/", omittingEmptySubsequences: false))
        for index in 0..<max(a.count, b.count) {
            let (x, y) = (index < a.count ? a[index] : nil, index < b.count ? b[index] : nil)
            if x == "#" || y == "#" { return true }          // the rest of any topic
            guard let x, let y else { return false }          // one ends before the other
            if x != "+" && y != "+" && x != y { return false }
        }
        return true
    }
}
