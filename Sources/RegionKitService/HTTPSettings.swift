import Foundation
import RegionKit

/// The `http:` block of the service configuration: the daemon's HTTP API, dashboard and metrics
/// (served by `RegionKitHTTP`; off unless the block is present).
///
/// ```yaml
/// http:
///   listen: 127.0.0.1:8080      # default; 0.0.0.0:8080 to serve the network
///   tokenFile: /etc/regionkit/api-token   # else REGIONKIT_API_TOKEN from the environment
///   public: false               # true: reads without the token (writes always need it)
///   allowedHosts: [gateway.lan] # names public reads are served to besides IP addresses and localhost
///   maxBodyBytes: 16384         # largest request body accepted
///   maxConnections: 512         # connections served at once; more wait to be accepted
///   requestTimeout: 30          # seconds to receive a request's body once its head has arrived
///   tlsCertificate: /etc/regionkit/cert.pem   # HTTPS with both (PEM chain and key)
///   tlsKey: /etc/regionkit/key.pem
/// ```
public struct HTTPSettings: Codable, Sendable, Hashable {
    public var listen: String?
    public var tokenFile: String?
    public var `public`: Bool?
    /// Host names (without port) that `public` reads are served to besides IP addresses and
    /// `localhost`; `*` for any. Another `Host` needs the token (no DNS rebinding).
    public var allowedHosts: [String]?
    public var maxBodyBytes: Int?
    /// Connections served at once (default 512): more wait in the listen backlog until one
    /// closes, so no client can use up the daemon's file descriptors (its store, hooks, broker).
    public var maxConnections: Int?
    /// Seconds a request's body may take to arrive once its head has (default 30): a client
    /// sending its body a byte at a time is disconnected.
    public var requestTimeout: Double?
    /// PEM certificate chain and private key files: the server speaks HTTPS when both are given.
    public var tlsCertificate: String?
    public var tlsKey: String?

    public init(listen: String? = nil, tokenFile: String? = nil, public isPublic: Bool? = nil, maxBodyBytes: Int? = nil,
                maxConnections: Int? = nil, requestTimeout: Double? = nil, tlsCertificate: String? = nil, tlsKey: String? = nil,
                allowedHosts: [String]? = nil) {
        self.allowedHosts = allowedHosts
        self.maxConnections = maxConnections
        self.requestTimeout = requestTimeout
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.listen = listen
        self.tokenFile = tokenFile
        self.public = isPublic
        self.maxBodyBytes = maxBodyBytes
    }

    /// `HOST:PORT` (`[::1]:8080` for IPv6) split, with an error naming what is wrong.
    public static func parseListen(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw RegionKitError(.invalidArgument, "http.listen '\(text)' must be HOST:PORT, e.g. 127.0.0.1:8080")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw RegionKitError(.invalidArgument, "http.listen '\(text)': the host is empty") }
        guard let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw RegionKitError(.invalidArgument, "http.listen '\(text)': the port must be a number from 0 to 65535")
        }
        return (host, port)
    }

    /// The bearer token: the first line of `tokenFile` (surrounding whitespace trimmed), else
    /// `REGIONKIT_API_TOKEN`; `nil` when neither is set. Errors never include the token.
    public func token(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw RegionKitError(.invalidArgument, "http.tokenFile: cannot read '\(tokenFile)'")
            }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw RegionKitError(.invalidArgument, "http.tokenFile: '\(tokenFile)' is empty") }
            guard !token.contains(where: { $0.isNewline || $0 == " " }) else {
                throw RegionKitError(.invalidArgument, "http.tokenFile: '\(tokenFile)' must hold one token without spaces")
            }
            return token
        }
        if let token = environment["REGIONKIT_API_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty {
            return token
        }
        return nil
    }

    /// A DNS name as `Host` carries it: labels of letters, digits, `-` and `_`, dot-separated, at most 253 bytes.
    static func isHostName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return (1...253).contains(name.utf8.count) && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D || byte == 0x5F
            }
        }
    }

    /// Checks the block (the token file is read when the server starts).
    public func validate() throws {
        _ = try Self.parseListen(listen ?? "127.0.0.1:8080")
        if let maxBodyBytes, !(256...1_048_576).contains(maxBodyBytes) {
            throw RegionKitError(.invalidArgument, "http.maxBodyBytes must be from 256 to 1048576")
        }
        if let maxConnections, !(1...100_000).contains(maxConnections) {
            throw RegionKitError(.invalidArgument, "http.maxConnections must be from 1 to 100000")
        }
        if let requestTimeout, !(requestTimeout.isFinite && requestTimeout >= 1 && requestTimeout <= 3600) {
            throw RegionKitError(.invalidArgument, "http.requestTimeout must be from 1 to 3600 seconds")
        }
        for (index, name) in (allowedHosts ?? []).enumerated() {
            guard name == "*" || Self.isHostName(name) else {
                throw RegionKitError(.invalidArgument, "http.allowedHosts[\(index)] '\(name.prefix(100))' must be a host name without port or scheme (gateway.lan), or *")
            }
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw RegionKitError(.invalidArgument, "http: give both tlsCertificate and tlsKey, or neither")
        }
    }
}
