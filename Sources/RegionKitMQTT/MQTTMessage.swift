/// One application message: what a PUBLISH carries (MQTT 3.1.1 §3.3).
///
/// ```swift
/// let online = MQTTMessage(topic: "regionkit/home/status", payload: Array("online".utf8),
///                          qos: .atLeastOnce, retain: true)
/// try await client.publish(online)
/// ```
public struct MQTTMessage: Sendable, Hashable {
    /// The topic name (no wildcards when publishing).
    public var topic: String
    /// The payload bytes (may be empty: an empty retained message clears the retained value).
    public var payload: [UInt8]
    /// The delivery guarantee.
    public var qos: MQTTQoS
    /// Whether the broker keeps this message as the topic's retained value.
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
