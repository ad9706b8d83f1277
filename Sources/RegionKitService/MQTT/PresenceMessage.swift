/// One message the presence hub publishes, before it meets a client: topic, payload, QoS, retain.
/// The hub's outputs are pure functions producing these, so they are tested without a broker.
///
/// ```swift
/// PresenceMessage(topic: "regionkit/home/status", text: "online", retain: true)
/// ```
public struct PresenceMessage: Hashable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    /// 0 or 1.
    public var qos: UInt8
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: UInt8 = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: UInt8 = 1, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// The payload as text (tests, logs).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}
