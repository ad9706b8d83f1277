import PostgresNIO

/// How a ``PostgresRegionStore``'s connections are encrypted: off, preferred or required, with the
/// TLS settings that check the server's certificate. Unlike PostgresNIO's own, it can also make the
/// store's first connection (``PostgresRegionStore/checkConnecting(_:timeout:description:logger:)``),
/// whose failure (a server that does not offer TLS, a certificate not trusted) is said at once;
/// the pool would retry it until the operation timed out.
///
/// ```swift
/// var verified = TLSConfiguration.makeClientConfiguration()   // the system's CAs, host name checked
/// let store = try await PostgresRegionStore(host: "db.lan", username: "regionkit", database: "site", tls: .require(verified))
/// ```
public struct PostgresStoreTLS: Sendable {
    enum Mode: Sendable { case disable, prefer, require }
    let mode: Mode
    let configuration: TLSConfiguration?

    /// No TLS.
    public static let disable = PostgresStoreTLS(mode: .disable, configuration: nil)
    /// TLS when the server offers it, else unencrypted.
    public static func prefer(_ configuration: TLSConfiguration) -> PostgresStoreTLS { PostgresStoreTLS(mode: .prefer, configuration: configuration) }
    /// TLS, or no connection.
    public static func require(_ configuration: TLSConfiguration) -> PostgresStoreTLS { PostgresStoreTLS(mode: .require, configuration: configuration) }

    /// Whether the connection is encrypted whatever the server offers.
    public var isRequired: Bool { mode == .require }

    /// The pool's setting.
    var client: PostgresClient.Configuration.TLS {
        switch (mode, configuration) {
        case (.prefer, let configuration?): .prefer(configuration)
        case (.require, let configuration?): .require(configuration)
        default: .disable
        }
    }

    /// One connection's setting (its SSL context made now: a CA file that cannot be loaded throws).
    func connection() throws -> PostgresConnection.Configuration.TLS {
        switch (mode, configuration) {
        case (.prefer, let configuration?): .prefer(try NIOSSLContext(configuration: configuration))
        case (.require, let configuration?): .require(try NIOSSLContext(configuration: configuration))
        default: .disable
        }
    }
}
