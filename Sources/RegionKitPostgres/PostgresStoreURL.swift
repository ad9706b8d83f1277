import Foundation
import RegionKitCore

/// Where a PostgreSQL store is: `postgres://user@host:port/database` (`postgresql://` too; port
/// default 5432, database default the user's name). The password is never part of it — a URL
/// with one is refused, since the URL is given on command lines and printed in logs; the daemon
/// reads the password from the environment variable ``passwordVariable``.
///
/// ```swift
/// if let url = try PostgresStoreURL(parsing: "postgres://regionkit@127.0.0.1:5433/site") {
///     let store = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user,
///                                               password: url.password(), database: url.database)
/// }
/// ```
public struct PostgresStoreURL: Sendable, Equatable, CustomStringConvertible {
    /// The environment variable holding the store's password (unset: no password, e.g. trust or
    /// peer authentication).
    public static let passwordVariable = "REGIONKIT_STORE_PASSWORD"

    public var user: String
    public var host: String
    public var port: Int
    public var database: String

    /// `nil` when `text` is not a PostgreSQL URL (then it is a SQLite path); throws
    /// `invalidArgument` naming the problem for a PostgreSQL URL that is malformed or carries a password.
    public init?(parsing text: String) throws {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else { return nil }
        guard let components = URLComponents(string: text) else {
            throw RegionKitError(.invalidArgument, "store URL is not a valid URL (expected postgres://user@host:port/database)")
        }
        guard components.password == nil else {
            // The text is not repeated: it holds the password.
            throw RegionKitError(.invalidArgument, """
                store URL postgres://\(components.user ?? "?")@\(components.host ?? "?")/… carries a password: it would show on \
                command lines and in logs; remove it and set \(Self.passwordVariable) instead
                """)
        }
        guard let user = components.user, !user.isEmpty else {
            throw RegionKitError(.invalidArgument, "store URL \(text) names no user (expected postgres://user@host:port/database)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw RegionKitError(.invalidArgument, "store URL \(text) names no host (expected postgres://user@host:port/database)")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw RegionKitError(.invalidArgument, "store URL \(text): port \(port) is not in 1…65535")
        }
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        guard !path.contains("/") else {
            throw RegionKitError(.invalidArgument, "store URL \(text): the database '\(path)' contains '/'")
        }
        guard components.query == nil, components.fragment == nil else {
            throw RegionKitError(.invalidArgument, "store URL \(text): query parameters and fragments are not supported")
        }
        self.user = user
        self.host = host
        self.port = port
        database = path.isEmpty ? user : path
    }

    /// `postgres://user@host:port/database`.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// The password from ``passwordVariable`` in `environment` (nil when unset or empty).
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment[Self.passwordVariable].flatMap { $0.isEmpty ? nil : $0 }
    }
}
