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
    /// `filter` arrives until it is granted. The client keeps the filter and asks for it again,
    /// on this connection after the reconnection backoff's delays (an ACL fixed and reloaded
    /// while the connection stays up) and at once on the next connection (`unsubscribe` forgets
    /// it): a refusal is never for good.
    case subscriptionRefused(filter: String)
    /// A subscription refused earlier on this connection was granted when asked again: messages
    /// published to `filter` arrive from now on.
    case subscriptionRestored(filter: String)
    /// A PUBLISH larger than `maximumIncomingPacketSize` arrived on `topic` (`size` bytes, the
    /// whole packet): its bytes were skipped as they came (never buffered), a QoS 1 one was
    /// acknowledged, and the connection stays up. MQTT 3.1.1 cannot tell the broker a limit, so
    /// closing would only bring the message back — a retained one at every reconnection.
    case messageSkipped(topic: String, size: Int, retained: Bool)
}
