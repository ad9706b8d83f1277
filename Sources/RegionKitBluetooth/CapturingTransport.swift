import RegionKitHCI
import Synchronization

/// An `HCITransport` that records every packet crossing another one into a
/// ``BTSnoopCaptureFile``: commands (and outgoing data) as *sent* when they are written,
/// events (and incoming data) as *received* when they are read. Nothing else changes.
///
/// ```swift
/// let raw = try await HCITransportSpecification(parsing: "tcp:127.0.0.1:9000").open()
/// let transport = CapturingTransport(wrapping: raw, capture: try BTSnoopCaptureFile(path: "session.btsnoop"))
/// try await transport.send(H4Packet(command: .reset))   // recorded with direction "sent"
/// ```
public final class CapturingTransport: HCITransport {
    /// Holds the wrapped stream's iterator between pulls (the stream is iterated from one task).
    private final class IteratorBox: @unchecked Sendable {
        var iterator: AsyncThrowingStream<H4Packet, any Error>.AsyncIterator
        init(_ iterator: AsyncThrowingStream<H4Packet, any Error>.AsyncIterator) { self.iterator = iterator }
    }

    public let wrapped: any HCITransport
    public let capture: BTSnoopCaptureFile
    public let packets: AsyncThrowingStream<H4Packet, any Error>

    public init(wrapping transport: any HCITransport, capture: BTSnoopCaptureFile) {
        wrapped = transport
        self.capture = capture
        let box = IteratorBox(transport.packets.makeAsyncIterator())
        packets = AsyncThrowingStream(unfolding: {
            guard let packet = try await box.iterator.next() else { return nil }
            capture.record(packet, direction: .received)
            return packet
        })
    }

    /// Records the packet, then sends it (so a command always precedes its answer in the file).
    public func send(_ packet: H4Packet) async throws {
        capture.record(packet, direction: .sent)
        try await wrapped.send(packet)
    }

    public func close() async {
        await wrapped.close()
    }
}
