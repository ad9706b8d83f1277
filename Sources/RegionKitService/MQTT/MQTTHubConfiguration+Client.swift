import Foundation
import RegionKitCore
import RegionKitMQTT

extension MQTTHubConfiguration {
    /// The client configuration for this broker block: the servers (``urls`` or ``url``), the
    /// credentials (the password read from its file or variable, never from the YAML), the CA file,
    /// the client id and the keepalive. Errors name the field.
    ///
    /// ```swift
    /// var client = try mqtt.clientConfiguration()
    /// client.cleanSession = false
    /// ```
    public func clientConfiguration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> MQTTClientConfiguration {
        var clientConfiguration: MQTTClientConfiguration
        do {
            clientConfiguration = try MQTTClientConfiguration(urls: brokerURLs)
        } catch {
            throw RegionKitError(.malformedInput, "mqtt.\(urls == nil ? "url" : "urls"): \(error)")
        }
        let credentials = try credentials(environment: environment)
        clientConfiguration.username = credentials.username
        clientConfiguration.password = credentials.password
        clientConfiguration.caFile = caFile
        if let clientID { clientConfiguration.clientID = clientID }
        if let keepAlive { clientConfiguration.keepAlive = .seconds(saturating: keepAlive) }
        return clientConfiguration
    }
}
