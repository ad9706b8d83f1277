/// A change of the client's connection, reported to `onConnectionEvent`.
///
/// ```swift
/// let client = MQTTClient(configuration: configuration, onMessage: { _ in }) { event in
///     if case .connected = event { Task { try? await client.publish(online) } }
/// }
/// ```
public enum MQTTConnectionEvent: Sendable {
    /// A CONNACK accepted the connection (subscriptions have been re-sent just before).
    case connected(sessionPresent: Bool)
    /// A connection ended, or an attempt failed before its CONNACK (refused, timed out, TLS, TCP):
    /// the error says why; `nil` after `shutdown()`.
    case disconnected(MQTTError?)
}
