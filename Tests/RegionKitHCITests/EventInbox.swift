import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RegionKitTestSupport
@testable import RegionKitHCI

/// Collects the events a transport delivers, so a test can wait for one with a deadline.
actor EventInbox {
    private(set) var events: [(at: ContinuousClock.Instant, event: HCIEvent)] = []
    private(set) var failure: (any Error)?
    private(set) var finished = false
    private var consumer: Task<Void, Never>?

    func start(_ transport: any HCITransport, capture: BTSnoopCapture? = nil) {
        consumer = Task {
            do {
                for try await packet in transport.packets {
                    capture?.record(packet, direction: .received)
                    guard packet.type == .event else { continue }
                    // Bumble (like BlueZ/Zephyr) sends one report per event; decode report by report.
                    let event = try packet.event(advertisingReportLayout: .reportByReport)
                    self.append(event)
                }
                self.finish(nil)
            } catch {
                self.finish(error)
            }
        }
    }

    private func append(_ event: HCIEvent) { events.append((ContinuousClock.now, event)) }
    private func finish(_ error: (any Error)?) {
        failure = error
        finished = true
    }

    /// Removes and returns the first event matching `predicate`, waiting up to `timeout`.
    func take(timeout: Duration = .seconds(20), where predicate: @Sendable (HCIEvent) -> Bool) async throws -> HCIEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let index = events.firstIndex(where: { predicate($0.event) }) {
                return events.remove(at: index).event
            }
            if finished { throw failure ?? TestFailure("the transport's stream ended") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no matching event within \(timeout)")
    }

    /// Waits until the stream ends; returns its error (nil for a clean end).
    func waitForEnd(timeout: Duration) async throws -> (any Error)? {
        let deadline = ContinuousClock.now + timeout
        while !finished {
            guard ContinuousClock.now < deadline else { throw TestFailure("the stream did not end within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return failure
    }

    func removeAll() { events.removeAll() }
}

/// Sends a command and waits for its Command Complete (or Command Status).
func execute(_ command: HCICommand, on transport: any HCITransport, inbox: EventInbox, capture: BTSnoopCapture? = nil) async throws -> HCIEvent {
    let packet = H4Packet(command: command)
    capture?.record(packet, direction: .sent)
    try await transport.send(packet)
    let opcode = command.opcode
    return try await inbox.take { $0.commandOpcode == opcode }
}
