import Foundation
import PostgresNIO
import RegionKitCore

/// Where a PostgreSQL store is: `postgres://user@host:port/database` (`postgresql://` too; port
/// default 5432, database default the user's name). The password is never part of it — a URL
/// with one is refused, since the URL is given on command lines and printed in logs; the daemon
/// reads the password from the environment variable ``passwordVariable``, or from the file that
/// ``passwordFileVariable`` names (a systemd credential, a Docker secret).
///
/// TLS is asked for as libpq asks: `?sslmode=` `disable` (the default: a URL without it connects
/// as before), `prefer`, `require` (encrypted, the certificate not checked), `verify-ca` (the
/// certificate's chain checked) or `verify-full` (the chain and the host name, or the IP address
/// the URL names); `&sslrootcert=/path/ca.pem` names the CA certificates to trust (default: the
/// system's). No other query parameter is accepted.
///
/// ```swift
/// if let url = try PostgresStoreURL(parsing: "postgres://regionkit@db.lan:5432/site?sslmode=verify-full") {
///     let store = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user,
///                                               password: url.password(), database: url.database, tls: url.tls())
/// }
/// ```
public struct PostgresStoreURL: Sendable, Equatable, CustomStringConvertible {
    /// The environment variable holding the store's password (unset: no password, e.g. trust or
    /// peer authentication).
    public static let passwordVariable = "REGIONKIT_STORE_PASSWORD"
    /// The environment variable naming a file that holds the store's password (its first line;
    /// a trailing newline is not part of it), so that the password itself is in no environment.
    public static let passwordFileVariable = "REGIONKIT_STORE_PASSWORD_FILE"

    /// How the connection is encrypted, with libpq's names (`sslmode`).
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS (the default).
        case disable
        /// TLS when the server offers it, else unencrypted; the certificate is not checked.
        case prefer
        /// TLS or no connection; the certificate is not checked (with `sslrootcert`: as `verify-ca`, as libpq does).
        case require
        /// TLS; the certificate must chain to a trusted CA.
        case verifyCA = "verify-ca"
        /// TLS; the certificate must chain to a trusted CA and name the host (or the IP address) connected to.
        case verifyFull = "verify-full"
    }

    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    /// `sslmode` (``SSLMode/disable`` when the URL has none).
    public var sslMode: SSLMode = .disable
    /// `sslrootcert`: a PEM file of the CA certificates to trust (nil: the system's trust store).
    public var sslRootCertificate: String?

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
        // Messages show the URL without its query and fragment (`?password=…`, `#…`) and without
        // its text as given, which could hold a password anywhere.
        let shown = "postgres://\(components.user ?? "")@\(components.host ?? "")\(components.port.map { ":\($0)" } ?? "")\(components.path)"
        guard components.fragment == nil else {
            throw RegionKitError(.invalidArgument, "store URL \(shown)#…: fragments are not supported (the password goes in \(Self.passwordVariable))")
        }
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                // A value that is no mode is not repeated either (the text could hold anything).
                guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw RegionKitError(.invalidArgument, "store URL \(shown)?…: sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sslMode = mode
            case "sslrootcert":
                guard let path = item.value, !path.isEmpty else {
                    throw RegionKitError(.invalidArgument, "store URL \(shown)?…: sslrootcert names no file")
                }
                sslRootCertificate = path
            default:
                // The name only: a value may be a password.
                throw RegionKitError(.invalidArgument, """
                    store URL \(shown)?…: query parameters other than sslmode and sslrootcert are not supported ('\(item.name.prefix(40))' given; \
                    the password goes in \(Self.passwordVariable))
                    """)
            }
        }
        if sslRootCertificate != nil, sslMode == .disable || sslMode == .prefer {
            throw RegionKitError(.invalidArgument, "store URL \(shown)?…: sslrootcert is used only with sslmode=require, verify-ca or verify-full (sslmode is \(sslMode.rawValue))")
        }
        guard let user = components.user, !user.isEmpty else {
            throw RegionKitError(.invalidArgument, "store URL \(shown) names no user (expected postgres://user@host:port/database)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw RegionKitError(.invalidArgument, "store URL \(shown) names no host (expected postgres://user@host:port/database)")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw RegionKitError(.invalidArgument, "store URL \(shown): port \(port) is not in 1…65535")
        }
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        guard !path.contains("/") else {
            throw RegionKitError(.invalidArgument, "store URL \(shown): the database '\(path)' contains '/'")
        }
        self.user = user
        self.host = host
        self.port = port
        database = path.isEmpty ? user : path
    }

    /// `postgres://user@host:port/database`, and its TLS settings when it has any.
    public var description: String {
        var text = "postgres://\(user)@\(host):\(port)/\(database)"
        if sslMode != .disable { text += "?sslmode=\(sslMode.rawValue)" }
        if let sslRootCertificate { text += "&sslrootcert=\(sslRootCertificate)" }
        return text
    }

    /// The connection's TLS as ``sslMode`` and ``sslRootCertificate`` say. Throws
    /// `invalidArgument` naming the file when the CA file cannot be read or holds no certificate.
    public func tls() throws -> PostgresStoreTLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let sslRootCertificate {
            guard FileManager.default.isReadableFile(atPath: sslRootCertificate) else {
                throw RegionKitError(.invalidArgument, "store URL: sslrootcert \(sslRootCertificate) cannot be read")
            }
            do {
                let certificates = try NIOSSLCertificate.fromPEMFile(sslRootCertificate)
                guard !certificates.isEmpty else { throw RegionKitError(.invalidArgument, "no certificate") }
                configuration.trustRoots = .certificates(certificates)
            } catch {
                throw RegionKitError(.invalidArgument, "store URL: sslrootcert \(sslRootCertificate) holds no PEM certificate")
            }
        }
        switch sslMode {
        case .disable:
            return .disable
        case .prefer:
            configuration.certificateVerification = .none
            return .prefer(configuration)
        case .require:
            configuration.certificateVerification = sslRootCertificate == nil ? .none : .noHostnameVerification
            return .require(configuration)
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
            return .require(configuration)
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
            return .require(configuration)
        }
    }

    /// The password from ``passwordVariable`` or the file ``passwordFileVariable`` names in
    /// `environment` (nil when neither is set, or set empty). Throws `invalidArgument`, naming the
    /// variable and the file but never the password, when both are set, or when the file cannot be
    /// read or holds no password.
    ///
    /// ```swift
    /// try url.password(environment: ["REGIONKIT_STORE_PASSWORD_FILE": "/run/credentials/regionkit.service/store"])
    /// ```
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        let direct = environment[Self.passwordVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let file = environment[Self.passwordFileVariable].flatMap({ $0.isEmpty ? nil : $0 }) else { return direct }
        guard direct == nil else {
            throw RegionKitError(.invalidArgument, "both \(Self.passwordVariable) and \(Self.passwordFileVariable) are set: set one of them")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RegionKitError(.invalidArgument, "\(Self.passwordFileVariable): cannot read \(file)")
        }
        // The first line: `echo secret > file` adds a newline that is not part of the password.
        // (`\r\n` is one Character, a newline like `\n`.)
        let password = String(String(decoding: data, as: UTF8.self)
            .split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
        guard !password.isEmpty else {
            throw RegionKitError(.invalidArgument, "\(Self.passwordFileVariable): \(file) holds no password (its first line is empty)")
        }
        return password
    }
}
