import Foundation
import RegionKitCore

/// The `http:` block of the daemon's configuration file.
///
/// ```yaml
/// http:
///   listen: 127.0.0.1:8080      # default; 0.0.0.0:8080 to serve the network
///   tokenFile: /etc/regionkit/api-token   # or REGIONKIT_API_TOKEN in the environment
///   public: false               # true: reads without the token (writes always need it)
///   maxBodyBytes: 16384         # largest request body accepted
/// ```
public struct HTTPSettings: Decodable, Sendable, Hashable {
    public var listen: String?
    public var tokenFile: String?
    public var `public`: Bool?
    public var maxBodyBytes: Int?

    public init(listen: String? = nil, tokenFile: String? = nil, public isPublic: Bool? = nil,
                maxBodyBytes: Int? = nil) {
        self.listen = listen
        self.tokenFile = tokenFile
        self.public = isPublic
        self.maxBodyBytes = maxBodyBytes
    }

    /// The server configuration: the token from `tokenFile` (surrounding whitespace trimmed), else
    /// from `REGIONKIT_API_TOKEN`. Errors name the key and never include the token.
    public func configuration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HTTPConfiguration {
        var configuration = try HTTPConfiguration(listen: listen ?? "127.0.0.1:8080")
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw RegionKitError(.invalidArgument, "http.tokenFile: cannot read '\(tokenFile)'")
            }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw RegionKitError(.invalidArgument, "http.tokenFile: '\(tokenFile)' is empty") }
            configuration.token = token
        } else if let token = environment["REGIONKIT_API_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty {
            configuration.token = token
        }
        configuration.isPublic = `public` ?? false
        if let maxBodyBytes {
            guard (256...1_048_576).contains(maxBodyBytes) else {
                throw RegionKitError(.invalidArgument, "http.maxBodyBytes must be from 256 to 1048576")
            }
            configuration.maxBodyBytes = maxBodyBytes
        }
        return configuration
    }
}
