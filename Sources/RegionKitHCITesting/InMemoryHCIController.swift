import RegionKitHCI
import RegionKitConcurrency

/// A controller that lives in memory behind the `HCITransport` protocol, for tests and
/// benchmarks that need the whole host stack without a radio, a socket or a Bumble process (the
/// role `EmbeddedChannel` plays for SwiftNIO).
///
/// Every command is answered at once with Command Complete, success — LE Read Local Supported
/// Features reports LE Extended Advertising (bit 12) when ``supportsExtendedAdvertising`` — unless
/// the test made its opcode silent (no answer: provokes the host's command timeout) or failing
/// (answered with that status). ``inject(_:layout:)`` delivers events as a controller would,
/// ``drop()`` fails the link as a TCP peer going away does, and ``sent`` records every command.
///
/// ```swift
/// let controller = InMemoryHCIController()
/// controller.silentOpcodes = [.leSetScanParameters]            // never answered
/// controller.failingOpcodes = [.leSetScanEnable: .commandDisallowed]
/// let scanner = BeaconScanner(manager: manager, transportName: "memory") { controller }
/// try await scanner.start()
/// controller.inject(.leMeta(.advertisingReport([report])))
/// #expect(controller.sentOpcodes.first == .reset)
/// ```
public final class InMemoryHCIController: HCITransport {
    public let packets: AsyncThrowingStream<H4Packet, any Error>
    private let continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation
    private let state: LockedBox<State>

    private struct State {
        var sent: [HCICommand] = []
        var closed = false
        var silent: Set<HCIOpcode> = []
        var failing: [HCIOpcode: HCIStatus] = [:]
        var extended: Bool
    }

    /// - Parameter supportsExtendedAdvertising: what LE Read Local Supported Features reports
    ///   (a scanner in automatic mode then picks the extended scanning commands).
    public init(supportsExtendedAdvertising: Bool = true) {
        state = LockedBox(State(extended: supportsExtendedAdvertising))
        (packets, continuation) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
    }

    /// Whether LE Read Local Supported Features reports LE Extended Advertising (bit 12).
    public var supportsExtendedAdvertising: Bool {
        get { state.withLock { $0.extended } }
        set { state.withLock { $0.extended = newValue } }
    }

    /// Opcodes that get no answer at all (to provoke a command timeout).
    public var silentOpcodes: Set<HCIOpcode> {
        get { state.withLock { $0.silent } }
        set { state.withLock { $0.silent = newValue } }
    }

    /// Opcodes answered with Command Complete carrying this status instead of success.
    public var failingOpcodes: [HCIOpcode: HCIStatus] {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    /// The commands received so far, in order (also those sent after ``close()``, which failed).
    public var sent: [HCICommand] { state.withLock { $0.sent } }

    /// The opcodes of ``sent``.
    public var sentOpcodes: [HCIOpcode] { sent.map(\.opcode) }

    public func send(_ packet: H4Packet) async throws {
        let command = try packet.command()
        let (closed, silent, failing, extended) = state.withLock { state in
            state.sent.append(command)
            return (state.closed, state.silent.contains(command.opcode), state.failing[command.opcode], state.extended)
        }
        if closed { throw HCIError(code: .closed, message: "in-memory controller closed") }
        if silent { return }
        if let failing {
            inject(.commandComplete(numPackets: 1, opcode: command.opcode, returnParameters: [failing.rawValue]))
            return
        }
        var returned: [UInt8] = [HCIStatus.success.rawValue]
        if command.opcode == .leReadLocalSupportedFeatures {
            returned += [0x00, extended ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0] // bit 12 = LE Extended Advertising
        }
        inject(.commandComplete(numPackets: 1, opcode: command.opcode, returnParameters: returned))
    }

    /// Delivers one event to the host, advertising reports encoded one report per event by
    /// default (as BlueZ, Zephyr and Bumble controllers send them).
    public func inject(_ event: HCIEvent, layout: LEAdvertisingReportLayout = .reportByReport) {
        inject(event: event.encoded(advertisingReportLayout: layout))
    }

    /// Delivers one HCI event packet (event code, parameter length, parameters) to the host.
    public func inject(event payload: [UInt8]) {
        continuation.yield(H4Packet(type: .event, payload: payload))
    }

    /// The link fails as a TCP peer going away does: ``packets`` ends with `.connectionClosed`.
    public func drop() {
        state.withLock { $0.closed = true }
        continuation.finish(throwing: HCIError(code: .connectionClosed, message: "in-memory controller: peer closed the connection"))
    }

    public func close() async {
        state.withLock { $0.closed = true }
        continuation.finish()
    }
}
