import Foundation
import Synchronization
@testable import RegionKitBluetooth

/// An in-memory HCI controller behind the ``HCITransport`` protocol: answers each command with
/// what `respond` returns (default: Command Complete success, LE features per `extended`), and
/// lets a test inject events, drop the link, or leave commands unanswered.
final class FakeController: HCITransport, @unchecked Sendable {
    struct State {
        var sent: [HCICommand] = []
        var closed = false
        /// Opcodes that get no answer (to provoke a timeout).
        var silent: Set<HCIOpcode> = []
        /// Opcodes answered with this status.
        var failing: [HCIOpcode: HCIStatus] = [:]
        var extended = true
    }

    let packets: AsyncThrowingStream<H4Packet, any Error>
    private let continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation
    let state = Mutex(State())

    init(extended: Bool = true) {
        (packets, continuation) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
        state.withLock { $0.extended = extended }
    }

    var sent: [HCICommand] { state.withLock { $0.sent } }
    var sentOpcodes: [HCIOpcode] { sent.map(\.opcode) }

    func send(_ packet: H4Packet) async throws {
        let command = try packet.command()
        let (closed, silent, failing, extended) = state.withLock { state in
            state.sent.append(command)
            return (state.closed, state.silent.contains(command.opcode), state.failing[command.opcode], state.extended)
        }
        if closed { throw HCIError(code: .closed, message: "fake controller closed") }
        if silent { return }
        if let failing {
            inject(.commandComplete(numPackets: 1, opcode: command.opcode, returnParameters: [failing.rawValue]))
            return
        }
        var returned: [UInt8] = [0x00]
        if command.opcode == .leReadLocalSupportedFeatures {
            returned += [0x00, extended ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0] // bit 12 = LE Extended Advertising
        }
        inject(.commandComplete(numPackets: 1, opcode: command.opcode, returnParameters: returned))
    }

    func close() async {
        state.withLock { $0.closed = true }
        continuation.finish()
    }

    func inject(_ event: HCIEvent) {
        continuation.yield(H4Packet(type: .event, payload: event.encoded(advertisingReportLayout: .reportByReport)))
    }

    /// The link fails as a TCP peer going away does.
    func drop() {
        state.withLock { $0.closed = true }
        continuation.finish(throwing: HCIError(code: .connectionClosed, message: "fake controller: peer closed the connection"))
    }
}

/// Waits (bounded) until `condition` holds.
func eventually(timeout: Duration = .seconds(5), _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects a manager's events.
final class EventLog: LocationManagerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LocationEvent] = []
    private var delivered: [Double] = []
    var events: [LocationEvent] { lock.withLock { stored } }
    /// Wall-clock time (Unix seconds) at which the first event of type `type` reached the delegate.
    func deliveryTime(of type: String) -> Double? {
        lock.withLock { stored.firstIndex { $0.typeName == type }.map { delivered[$0] } }
    }
    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        let now = Date().timeIntervalSince1970
        lock.withLock {
            stored.append(event)
            delivered.append(now)
        }
    }
    func types(_ region: String? = nil) -> [String] {
        events.filter { region == nil || $0.regionIdentifier == region }.map(\.typeName)
    }
}

enum Sample {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let identity = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let beaconAddress = BluetoothAddress("C0:FF:EE:00:00:01")!
    static var iBeaconData: [UInt8] { IBeaconFrame(identity: identity, measuredPower: -59).advertisingData() }

    static func legacyReport(_ type: LEAdvertisingReport.EventType, data: [UInt8] = iBeaconData, address: BluetoothAddress = beaconAddress, rssi: Int8 = -50) -> HCIEvent {
        .leMeta(.advertisingReport([LEAdvertisingReport(eventType: type, addressType: .public, address: address, data: data, rawRSSI: rssi)]))
    }

    static func extendedReport(_ type: LEExtendedAdvertisingReport.EventType, data: [UInt8] = iBeaconData, rssi: Int8 = -50) -> HCIEvent {
        .leMeta(.extendedAdvertisingReport([LEExtendedAdvertisingReport(eventType: type, addressType: .public, address: beaconAddress, rawTXPower: 0, rawRSSI: rssi, data: data)]))
    }
}

/// A lock-protected value that closures can capture by reference.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
