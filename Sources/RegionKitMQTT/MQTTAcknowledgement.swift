import NIOCore

/// The PUBACK a QoS 1 message delivered to a client made with `onDelivery` still owes the broker
/// (``MQTTClient/init(configuration:logger:readPause:onReadComplete:onDelivery:onConnectionEvent:)``):
/// sent by ``MQTTClient/acknowledge(_:)`` once the consumer has made the message durable. Until
/// then the broker keeps the message in the session; when the connection closes first, a
/// persistent session delivers it again (to whoever connects with the client id next). It belongs
/// to the connection that delivered the message: acknowledged after that connection closed, it is
/// dropped (the broker delivers the message again on the next one).
///
/// ```swift
/// let client = MQTTClient(configuration: configuration, onDelivery: { message, acknowledgement in
///     outbox.append(message, then: acknowledgement)   // acknowledged once stored
/// })
/// // later, in the order the messages arrived:
/// client.acknowledge(stored.compactMap(\.acknowledgement))
/// ```
public struct MQTTAcknowledgement: Sendable {
    /// The PUBLISH's packet id.
    public let packetID: UInt16
    /// The connection that delivered it (its handler, on its event loop).
    let connection: NIOLoopBoundBox<MQTTConnectionHandler?>
    let loop: any EventLoop
}
