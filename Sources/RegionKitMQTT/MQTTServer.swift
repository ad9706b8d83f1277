/// One broker address the client can connect to: host, port and whether TLS is used.
///
/// A configuration holds an ordered list of them (``MQTTClientConfiguration/servers``): the
/// primary, then the fallbacks tried in turn when a connection cannot be made or is lost — the
/// nodes of a clustered broker, for example.
///
/// ```swift
/// let node = try MQTTServer(url: "mqtt://10.0.0.2:1883")
/// print(node)                          // mqtt://10.0.0.2:1883
/// ```
public struct MQTTServer: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var useTLS: Bool

    public init(host: String, port: Int, useTLS: Bool = false) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]` with the same rules as
    /// ``MQTTClientConfiguration/init(url:)``.
    public init(url: String) throws(MQTTError) {
        let (useTLS, host, port) = try MQTTClientConfiguration.parse(url: url)
        self.init(host: host, port: port, useTLS: useTLS)
    }

    /// `mqtt[s]://host:port` (IPv6 hosts in brackets).
    public var url: String { "\(useTLS ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    public var description: String { url }
}
