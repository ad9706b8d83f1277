/// The one ``HCITransport`` implementation: H4 packets over a file descriptor (a TCP socket, a
/// serial device, a Linux HCI socket), read by a `FileDescriptorChannel`'s reader thread.
///
/// Its three openers make the descriptor and hand it over: ``TCPTransport/connect(host:port:timeout:)``,
/// ``SerialTransport/open(path:baudRate:flowControl:)`` and ``HCISocketTransport/open(adapter:channel:)``
/// (or ``HCITransportSpecification/open(timeout:)`` from a spec string). Opening blocks its own
/// thread, never one of Swift concurrency's.
///
/// ```swift
/// let transport = try await TCPTransport.connect(host: "127.0.0.1", port: 9000)
/// print(transport.specification)   // tcp:127.0.0.1:9000
/// try await transport.send(H4Packet(command: .reset))
/// await transport.close()
/// ```
public final class DescriptorTransport: HCITransport {
    private let channel: FileDescriptorChannel
    /// Where the transport leads.
    public let specification: HCITransportSpecification
    /// A name for messages (`tcp:127.0.0.1:9000`, `hci0`, `serial:/dev/ttyUSB0:115200`).
    public var name: String { channel.name }

    public var packets: AsyncThrowingStream<H4Packet, any Error> { channel.packets }

    private init(channel: FileDescriptorChannel, specification: HCITransportSpecification) {
        self.channel = channel
        self.specification = specification
    }

    /// Runs `makeDescriptor` on its own thread, takes ownership of the descriptor it returns and
    /// starts reading it.
    static func open(_ specification: HCITransportSpecification, name: String, isSocket: Bool,
                     makeDescriptor: @escaping @Sendable () throws(HCIError) -> Int32) async throws(HCIError) -> DescriptorTransport {
        let descriptor = try await runBlocking(makeDescriptor)
        let channel = try FileDescriptorChannel(descriptor: descriptor, name: name, isSocket: isSocket)
        channel.start()
        return DescriptorTransport(channel: channel, specification: specification)
    }

    public func send(_ packet: H4Packet) async throws {
        try channel.write(packet.encoded)
    }

    public func close() async {
        await channel.close()
    }

    /// A transport dropped without ``close()`` still stops its reader thread and releases the descriptor.
    deinit {
        channel.requestClose()
    }
}
