import Foundation
import RegionKitService

/// How the daemon's HTTP server listens and who may use it.
///
/// Bound to loopback by default. A bearer token is required for every write, and for every read
/// unless ``isPublic`` is set (a trusted network). Without a token the server refuses writes
/// altogether (and reads too unless public).
///
/// ```swift
/// let configuration = try HTTPConfiguration(listen: "127.0.0.1:8080", token: "s3cret")
/// let server = RegionKitServer(service: service, configuration: configuration)
/// ```
public struct HTTPConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port (see ``RegionKitServer/run(onListening:)``).
    public var port: Int
    /// The bearer token; never logged.
    public var token: String?
    /// Reads without a token (writes still need it), served to requests whose `Host` is an IP
    /// address, `localhost` or one of ``allowedHosts``.
    public var isPublic: Bool
    /// The host names (without port, any case) public reads are served to besides IP addresses
    /// and `localhost`; `*` for every name. Any other `Host` needs the token, so a web page that
    /// re-points its own name at the daemon (DNS rebinding) cannot read it.
    public var allowedHosts: [String] = []
    /// The largest request body accepted, bytes.
    public var maxBodyBytes: Int
    /// Seconds between SSE keep-alive comments.
    public var keepAliveInterval: Double
    /// Seconds a connection may stay open with no request in progress (keep-alive between
    /// requests, or a client that connects and never completes a request head, or a TLS
    /// handshake) before the server closes it: an idle or stalled client does not hold a
    /// connection and its file descriptor for ever. An event stream in progress is not idle.
    public var idleTimeout: Double
    /// Connections served at once; more wait in the listen backlog until one closes (no client
    /// can use up the daemon's file descriptors, which its store, hooks and broker need too).
    public var maxConnections: Int = 512
    /// Seconds a request's body may take to arrive once its head has: a client sending its body a
    /// byte at a time is disconnected (`RequestReadTimeout`). Event streams count toward
    /// ``maxConnections`` for as long as they are open.
    public var requestTimeout: Double = 30
    /// PEM certificate chain and private key files: HTTPS when both are set.
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?

    public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, isPublic: Bool = false,
                maxBodyBytes: Int = 16 * 1024, keepAliveInterval: Double = 15, idleTimeout: Double = 60) {
        self.host = host
        self.port = port
        self.token = token
        self.isPublic = isPublic
        self.maxBodyBytes = maxBodyBytes
        self.keepAliveInterval = keepAliveInterval
        self.idleTimeout = idleTimeout
    }

    /// - Parameter listen: `HOST:PORT` (`[::1]:8080` for IPv6).
    public init(listen: String, token: String? = nil, isPublic: Bool = false) throws {
        let (host, port) = try HTTPSettings.parseListen(listen)
        self.init(host: host, port: port, token: token, isPublic: isPublic)
    }
}
