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
    /// The broker refused a subscription (SUBACK return code 0x80): nothing published to
    /// `filter` arrives on this connection. The client keeps the filter and asks for it again on
    /// the next connection (`unsubscribe` forgets it); a refusal at a reconnection (an ACL not
    /// loaded yet, a broker node still starting) is no longer for good.
    case subscriptionRefused(filter: String)
}
