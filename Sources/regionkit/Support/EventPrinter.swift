import Foundation
import RegionKit
import RegionKitSimulation

/// Prints simulation events as JSON lines or as a readable timeline.
final class EventPrinter: @unchecked Sendable {
    private let json: Bool
    private let allEvents: Bool
    private let lock = NSLock()
    private var timeline = TimelineFormatter()

    init(json: Bool, allEvents: Bool) {
        self.json = json
        self.allEvents = allEvents
    }

    func print(_ event: SimulationEvent) {
        lock.lock()
        defer { lock.unlock() }
        if json {
            if case .location(let location) = event, !allEvents, !LocationEvent.contractTypes.contains(location.typeName) { return }
            if case .app = event, !allEvents { return }
            Console.line(event.jsonLine(origin: .zero))
        } else if let line = timeline.line(for: event) {
            Console.textLine(line)
        }
    }
}
