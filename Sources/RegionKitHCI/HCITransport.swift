/// A link to an HCI controller that carries ``H4Packet``s both ways.
///
/// Implementation: ``DescriptorTransport``, opened by ``TCPTransport`` (H4 over
/// TCP, e.g. a Bumble virtual controller), ``SerialTransport`` (H4 over a UART)
/// or ``HCISocketTransport`` (Linux raw HCI socket); open one from a spec string
/// with ``HCITransportSpecification``. Tests use `InMemoryHCIController`
/// (RegionKitHCITesting).
///
/// ``packets`` delivers what the controller sends. It finishes normally after
/// ``close()``, and finishes by throwing an ``HCIError`` when the link fails:
/// `.connectionClosed` when the peer went away, `.io` for a read error,
/// `.unknownPacketType` when the byte stream is not H4. A scanner above
/// surfaces that as a monitoring failure and reopens the transport.
///
/// ```swift
/// let transport = try await HCITransportSpecification(parsing: "tcp:127.0.0.1:9000").open()
/// try await transport.send(H4Packet(command: .reset))
/// for try await packet in transport.packets {
///     if case .commandComplete(_, .reset, _) = try packet.event() { break }
/// }
/// await transport.close()
/// ```
public protocol HCITransport: AnyObject, Sendable {
    /// Packets from the controller, in order. Iterate it from one task only.
    var packets: AsyncThrowingStream<H4Packet, any Error> { get }

    /// Writes one packet (H4 type byte + packet). Throws ``HCIError`` `.closed`
    /// after ``close()``, `.connectionClosed` if the peer is gone, `.timedOut`
    /// if the controller stops accepting bytes.
    func send(_ packet: H4Packet) async throws

    /// Closes the link and waits until the reader has stopped and the file
    /// descriptor is released. ``packets`` then finishes without error. Idempotent.
    func close() async
}
