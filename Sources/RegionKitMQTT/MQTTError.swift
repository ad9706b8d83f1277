/// Every error of the MQTT client, typed so that callers can react to each case.
///
/// ```swift
/// do { try await client.publish(message) }
/// catch .notConnected { outbox.keep(message) }      // retry after the next `.connected` event
/// catch { logger.error("publish failed: \(error)") }
/// ```
public enum MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broker URL could not be used.
    case invalidURL(String, reason: String)
    /// A configuration value could not be used (CA file, …).
    case invalidConfiguration(String)
    /// A topic name we were asked to publish to is not valid (empty, wildcard, too long, U+0000).
    case invalidTopic(String, reason: String)
    /// A topic filter we were asked to subscribe to is not valid.
    case invalidTopicFilter(String, reason: String)
    /// A packet we were asked to send would exceed MQTT's 268,435,455-byte remaining length.
    case packetTooLarge(size: Int, maximum: Int)
    /// The broker sent a malformed or unexpected packet; the connection was closed.
    case protocolError(MQTTProtocolError)
    /// The broker refused the connection with this CONNACK return code.
    case connectionRefused(MQTTConnectReturnCode)
    /// The broker answered a SUBSCRIBE with the failure code 0x80 for this filter.
    case subscriptionFailed(filter: String)
    /// There is no connection (or it was lost before the acknowledgement arrived).
    case notConnected
    /// The TCP connection could not be made or failed (the system's reason).
    case connectionFailed(String)
    /// No CONNACK within `connectTimeout`.
    case connectTimeout
    /// No PINGRESP (nor any other packet) from the broker within half a keepalive after a PINGREQ.
    case keepAliveTimeout
    /// The broker closed the connection.
    case connectionClosed
    /// The TLS handshake or the TLS session failed.
    case tls(String)
    /// All 65,535 packet identifiers are waiting for an acknowledgement.
    case tooManyInFlight
    /// `shutdown()` was called or `run()` ended.
    case shutdown
    /// The waiting task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "invalid MQTT URL '\(url)': \(reason)"
        case .invalidConfiguration(let what): "invalid MQTT configuration: \(what)"
        case .invalidTopic(let topic, let reason): "invalid topic name '\(Self.shortened(topic))': \(reason)"
        case .invalidTopicFilter(let filter, let reason): "invalid topic filter '\(filter)': \(reason)"
        case .packetTooLarge(let size, let maximum): "packet of \(size) bytes exceeds the maximum of \(maximum)"
        case .protocolError(let error): "MQTT protocol error: \(error)"
        case .connectionRefused(let code): "broker refused the connection: \(code)"
        case .subscriptionFailed(let filter): "broker refused the subscription to '\(filter)'"
        case .notConnected: "not connected to the broker"
        case .connectionFailed(let reason): "connection failed: \(reason)"
        case .connectTimeout: "no CONNACK from the broker in time"
        case .keepAliveTimeout: "no PINGRESP from the broker in time (keepalive)"
        case .connectionClosed: "the broker closed the connection"
        case .tls(let reason): "TLS error: \(reason)"
        case .tooManyInFlight: "all 65535 packet identifiers are in flight"
        case .shutdown: "the MQTT client was shut down"
        case .cancelled: "cancelled"
        }
    }

    /// A topic for a message: its first 120 characters and its length when longer.
    private static func shortened(_ topic: String) -> String {
        topic.count <= 120 ? topic : "\(topic.prefix(120))… (\(topic.utf8.count) bytes)"
    }
}
