import Synchronization

/// A controller that lives in memory behind the ``HCITransport`` protocol: every command is
/// answered at once with Command Complete, success (LE Read Local Supported Features reports
/// extended advertising when ``supportsExtendedAdvertising``), and ``inject(event:)`` delivers
/// events as a controller would. For benchmarks and tests that need the whole host stack
/// without a radio, a socket or a Bumble process.
///
/// ```swift
/// let controller = InMemoryHCIController()
/// let scanner = BeaconScanner(manager: manager, transportName: "memory") { controller }
/// try await scanner.start()
/// controller.inject(event: HCIEvent.leMeta(.advertisingReport([report])).encoded())
/// ```
public final class InMemoryHCIController: HCITransport {
    public let packets: AsyncThrowingStream<H4Packet, any Error>
    private let continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation
    private let state = Mutex(State())

    private struct State {
        var commands: [HCIOpcode] = []
        var closed = false
    }

    /// Whether LE Read Local Supported Features reports LE Extended Advertising (bit 12).
    public let supportsExtendedAdvertising: Bool

    public init(supportsExtendedAdvertising: Bool = false) {
        self.supportsExtendedAdvertising = supportsExtendedAdvertising
        (packets, continuation) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
    }

    /// The opcodes of the commands received so far, in order.
    public var commands: [HCIOpcode] { state.withLock { $0.commands } }

    public func send(_ packet: H4Packet) async throws {
        let command = try packet.command()
        let closed = state.withLock { state -> Bool in
            state.commands.append(command.opcode)
            return state.closed
        }
        if closed { throw HCIError(code: .closed, message: "in-memory controller closed") }
        var returned: [UInt8] = [HCIStatus.success.rawValue]
        if command.opcode == .leReadLocalSupportedFeatures {
            returned += [0x00, supportsExtendedAdvertising ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0]
        }
        continuation.yield(H4Packet(type: .event, payload: HCIEvent.commandComplete(numPackets: 1, opcode: command.opcode, returnParameters: returned).encoded()))
    }

    /// Delivers one HCI event packet (event code, parameter length, parameters) to the host.
    public func inject(event payload: [UInt8]) {
        continuation.yield(H4Packet(type: .event, payload: payload))
    }

    public func close() async {
        state.withLock { $0.closed = true }
        continuation.finish()
    }
}
