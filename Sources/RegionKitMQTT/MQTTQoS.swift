/// The delivery guarantee of an MQTT message (MQTT 3.1.1 §4.3).
///
/// QoS 2 is not offered: RegionKit never subscribes or publishes with it.
///
/// ```swift
/// let message = MQTTMessage(topic: "a/b", payload: Array("hi".utf8), qos: .atLeastOnce, retain: false)
/// ```
public enum MQTTQoS: UInt8, Sendable, Hashable, CaseIterable {
    /// Fire and forget (QoS 0).
    case atMostOnce = 0
    /// Acknowledged with PUBACK (QoS 1).
    case atLeastOnce = 1
}
