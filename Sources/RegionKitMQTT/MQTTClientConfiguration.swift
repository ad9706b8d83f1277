/// Where and how `MQTTClient` connects.
///
/// ```swift
/// var configuration = try MQTTClientConfiguration(url: "mqtts://broker.lan")   // port 8883, TLS
/// configuration.username = "regionkit"
/// configuration.password = try String(contentsOfFile: "/etc/regionkit/mqtt-password", encoding: .utf8)
/// configuration.caFile = "/etc/regionkit/ca.pem"
/// configuration.will = MQTTMessage(topic: "regionkit/home/status", payload: Array("offline".utf8),
///                                  qos: .atLeastOnce, retain: true)
/// ```
///
/// Several brokers (the nodes of a cluster): the first URL is the primary, the others are
/// ``fallbackServers``, tried in order when a connection cannot be made or is lost (see
/// ``servers``). All of them share the credentials, TLS settings and client id.
///
/// ```swift
/// let cluster = try MQTTClientConfiguration(urls: ["mqtt://10.0.0.1", "mqtt://10.0.0.2", "mqtt://10.0.0.3"])
/// ```
///
/// `description`, `debugDescription` and `dump` never show the password.
public struct MQTTClientConfiguration: Sendable {
    /// 2 MiB: a 1 MB message (the largest the presence sources are tested with) passes with room.
    public static let defaultMaximumIncomingPacketSize = 2 * 1024 * 1024

    /// The primary broker (the first of ``servers``).
    public var host: String
    public var port: Int
    public var useTLS: Bool
    /// Brokers tried after the primary, in this order (default none). The client moves to the next
    /// server of ``servers`` (wrapping around) after every failed attempt and after every lost
    /// connection, so a dead node is not retried first; it waits for the reconnect backoff after a
    /// lost connection and once every server of a round has failed (not between failed attempts
    /// within a round). Persistent sessions follow the client only where
    /// the brokers share them (a NATS cluster keeps MQTT sessions in JetStream; separate Mosquitto
    /// brokers do not).
    public var fallbackServers: [MQTTServer]
    /// Default `regionkit-` and 12 random letters and digits.
    public var clientID: String
    public var username: String?
    public var password: String?
    /// PEM file of the CA certificate(s) to trust for `mqtts`; `nil` uses the system's trust roots.
    public var caFile: String?
    /// Keepalive (default 30 s). Sent in whole seconds, at least 1 and at most 65,535: MQTT's 0 (off)
    /// is never sent. A PINGREQ goes out every keepalive; no answer within half a keepalive closes
    /// the connection and a new one is made.
    public var keepAlive: Duration
    /// Default `true`: the broker keeps no session between connections (subscriptions are re-sent).
    public var cleanSession: Bool
    /// The last will the broker publishes when the connection ends without a DISCONNECT.
    public var will: MQTTMessage?
    /// Reconnect delays grow exponentially from the minimum (default 0.1 s) to the maximum (default
    /// 10 s), each drawn uniformly from [delay/2, delay] (jitter); they restart from the minimum after a connection
    /// that lasted 10 s, and from at most 16× the minimum after a shorter one (a broker that accepts and
    /// drops at once is not reconnected to every minimum delay).
    public var reconnectMinimumDelay: Duration
    public var reconnectMaximumDelay: Duration
    /// The largest packet accepted from the broker, fixed header included (default 2 MiB). A larger
    /// PUBLISH is skipped (acknowledged at QoS 1, reported as ``MQTTConnectionEvent/messageSkipped(topic:size:retained:)``)
    /// and the connection stays up; any other larger packet closes the connection with
    /// `MQTTProtocolError.Kind.packetTooLarge`.
    public var maximumIncomingPacketSize: Int
    /// Time allowed for TCP (+ TLS) and the CONNACK (default 10 s).
    public var connectTimeout: Duration

    /// Parses `mqtt://host[:port]` (default port 1883) or `mqtts://host[:port]` (default 8883, TLS).
    /// IPv6 literals go in brackets: `mqtt://[::1]:1883`. A trailing `/` is allowed; user info,
    /// paths, queries and other schemes are rejected.
    public init(url: String) throws(MQTTError) {
        let (useTLS, host, port) = try Self.parse(url: url)
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.clientID = Self.randomClientID()
        self.username = nil
        self.password = nil
        self.caFile = nil
        self.keepAlive = .seconds(30)
        self.cleanSession = true
        self.will = nil
        self.reconnectMinimumDelay = .milliseconds(100)
        self.reconnectMaximumDelay = .seconds(10)
        self.maximumIncomingPacketSize = Self.defaultMaximumIncomingPacketSize
        self.connectTimeout = .seconds(10)
        self.fallbackServers = []
    }

    /// The primary broker from the first URL and the fallbacks from the others, in order; every
    /// URL is checked as in ``init(url:)``. At least one URL is needed.
    public init(urls: [String]) throws(MQTTError) {
        guard let first = urls.first else { throw .invalidConfiguration("no broker URL given") }
        try self.init(url: first)
        var fallbacks: [MQTTServer] = []
        for url in urls.dropFirst() { fallbacks.append(try MQTTServer(url: url)) }
        fallbackServers = fallbacks
    }

    /// The primary broker then the fallbacks: the order in which connections are attempted.
    public var servers: [MQTTServer] {
        [MQTTServer(host: host, port: port, useTLS: useTLS)] + fallbackServers
    }

    /// The keepalive as sent in CONNECT: whole seconds, clamped to 1…65,535.
    public var keepAliveSeconds: UInt16 {
        let seconds = keepAlive.components.seconds + (keepAlive.components.attoseconds > 0 ? 1 : 0)
        return UInt16(clamping: max(1, seconds))
    }

    /// `url` with everything between its scheme and its last `@` (user and password, whatever
    /// they hold) replaced by `***`: the form an error message or a log line may show.
    ///
    /// ```swift
    /// MQTTClientConfiguration.redactingCredentials("mqtt://user:secret@broker:1883")   // "mqtt://***@broker:1883"
    /// ```
    public static func redactingCredentials(_ url: String) -> String {
        // After the scheme's "://", if there is one (a URL without it is checked from its start).
        var start = url.startIndex
        var index = url.startIndex
        while index < url.endIndex {
            if url[index...].hasPrefix("://") {
                start = url.index(index, offsetBy: 3)
                break
            }
            index = url.index(after: index)
        }
        let rest: Substring = url[start...]
        // Up to the last "@" anywhere, not only in the authority: a password holding "/", "?" or
        // "#" (unescaped) ends the authority early, and the rest of it would be shown. (An "@" in
        // an MQTT URL's path is unheard of; hiding too much there is harmless.)
        guard let at = rest.lastIndex(of: "@") else { return url }
        return String(url[..<start]) + "***" + String(rest[at...])
    }

    static func randomClientID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return "regionkit-" + String((0..<12).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    static func parse(url given: String) throws(MQTTError) -> (useTLS: Bool, host: String, port: Int) {
        // Errors repeat the URL, but never a password someone put in it.
        let url = redactingCredentials(given)
        let useTLS: Bool
        var rest: Substring
        if url.lowercased().hasPrefix("mqtt://") {
            useTLS = false
            rest = url.dropFirst("mqtt://".count)
        } else if url.lowercased().hasPrefix("mqtts://") {
            useTLS = true
            rest = url.dropFirst("mqtts://".count)
        } else {
            throw .invalidURL(url, reason: "the scheme must be mqtt:// or mqtts:// (e.g. mqtt://127.0.0.1:1883)")
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("@") {
            throw .invalidURL(url, reason: "credentials do not go in the URL: set username and password (or a password file)")
        }
        if let cut = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            // Shown up to the path: a query may carry a token (`?password=…`).
            throw .invalidURL(String(url[..<cut]) + "…", reason: "only mqtt[s]://host[:port] is accepted (no path, query or fragment)")
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .invalidURL(url, reason: "unterminated '[' in an IPv6 host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL(url, reason: "unexpected text after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw .invalidURL(url, reason: "the host is missing") }
        var port = useTLS ? 8883 : 1883
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw .invalidURL(url, reason: "the port '\(portText)' is not a number in 1…65535")
            }
            port = value
        }
        return (useTLS, String(host), port)
    }
}

extension MQTTClientConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var text = servers.map(\.url).joined(separator: ", ") + " client \(clientID)"
        if let username { text += " user \(username)" }
        if password != nil { text += " password <redacted>" }
        if let caFile { text += " ca \(caFile)" }
        text += " keepalive \(keepAliveSeconds) s"
        return text
    }

    public var debugDescription: String { "MQTTClientConfiguration(\(description))" }

    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "useTLS": useTLS, "fallbackServers": fallbackServers, "clientID": clientID,
            "username": username as Any, "password": password == nil ? "nil" : "<redacted>",
            "caFile": caFile as Any, "keepAlive": keepAlive, "cleanSession": cleanSession, "will": will as Any,
            "reconnectMinimumDelay": reconnectMinimumDelay, "reconnectMaximumDelay": reconnectMaximumDelay,
            "maximumIncomingPacketSize": maximumIncomingPacketSize, "connectTimeout": connectTimeout,
        ], displayStyle: .struct)
    }
}
