import Foundation
import RegionKitService

extension HTTPConfiguration {
    /// The server configuration for the service configuration's `http:` block, with the token
    /// from `tokenFile` or `REGIONKIT_API_TOKEN`; the TLS certificate and key files, when given,
    /// are read and checked here.
    ///
    /// ```swift
    /// if let settings = configuration.http { let http = try HTTPConfiguration(settings: settings) }
    /// ```
    public init(settings: HTTPSettings, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try settings.validate()
        let (host, port) = try HTTPSettings.parseListen(settings.listen ?? "127.0.0.1:8080")
        self.init(host: host, port: port, token: try settings.token(environment: environment), isPublic: settings.public ?? false)
        if let maxBodyBytes = settings.maxBodyBytes { self.maxBodyBytes = maxBodyBytes }
        allowedHosts = settings.allowedHosts ?? []
        if let maxConnections = settings.maxConnections { self.maxConnections = maxConnections }
        if let requestTimeout = settings.requestTimeout { self.requestTimeout = requestTimeout }
        tlsCertificateFile = settings.tlsCertificate
        tlsKeyFile = settings.tlsKey
        // The certificate and key are read now: a bad file stops the start before the sources and the hub run.
        _ = try RegionKitServer.tlsConfiguration(self)
    }
}
