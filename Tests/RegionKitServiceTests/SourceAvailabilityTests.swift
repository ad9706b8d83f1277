import Testing
import RegionKitConcurrency
import RegionKit
@testable import RegionKitService

@Suite("Sources judged one by one (SourceAvailability)")
struct SourceAvailabilityTests {
    /// Records what the engine would be told.
    final class Applied: Sendable {
        let calls = LockedBox<[(AuthorizationStatus, RegionKind)]>([])
        var list: [(AuthorizationStatus, RegionKind)] { calls.withLock { $0 } }
    }

    @Test("A working simulator keeps the beacon regions available while a controller is unreachable")
    func anyWorkingSourceWins() {
        let applied = Applied()
        let availability = SourceAvailability(sources: [("simulator:museum", [.beacon: .authorized]), ("hci:tcp:127.0.0.1:9", [.beacon: .notDetermined])]) {
            status, kind in applied.calls.withLock { $0.append((status, kind)) }
        }
        #expect(availability.initialStatuses == [.beacon: .authorized])
        availability.report(.restricted(reason: "cannot open tcp:127.0.0.1:9"), for: .beacon, from: "hci:tcp:127.0.0.1:9")
        #expect(availability.combined(for: .beacon) == .authorized)
        #expect(applied.list.isEmpty, "the combined status did not change: the engine is not told")
        // The simulator's adapter goes off too: now nothing works, and the reason names both.
        availability.report(.restricted(reason: "simulated adapter off"), for: .beacon, from: "simulator:museum")
        guard case .restricted(let reason)? = availability.combined(for: .beacon) else {
            Issue.record("expected restricted, got \(String(describing: availability.combined(for: .beacon)))")
            return
        }
        #expect(reason == "no source works (simulator:museum: simulated adapter off; hci:tcp:127.0.0.1:9: cannot open tcp:127.0.0.1:9)")
        #expect(applied.list.count == 1 && applied.list[0].1 == .beacon)
        // The controller comes back: available again, told once.
        availability.report(.authorized, for: .beacon, from: "hci:tcp:127.0.0.1:9")
        #expect(applied.list.map(\.0) == [.restricted(reason: reason), .authorized])
    }

    @Test("Kinds are judged apart: gpsd down restricts the circular regions only")
    func kindsApart() {
        let applied = Applied()
        let availability = SourceAvailability(sources: [("simulator:museum", [.beacon: .authorized]), ("gpsd:127.0.0.1:2947", [.circular: .notDetermined])]) {
            status, kind in applied.calls.withLock { $0.append((status, kind)) }
        }
        #expect(!availability.isDetermined)
        availability.report(.restricted(reason: "gpsd at 127.0.0.1:2947 unreachable"), for: .circular, from: "gpsd:127.0.0.1:2947")
        #expect(availability.isDetermined)
        #expect(availability.combined(for: .beacon) == .authorized)
        // One source alone: its own reason, unprefixed (it already names the device).
        #expect(availability.combined(for: .circular) == .restricted(reason: "gpsd at 127.0.0.1:2947 unreachable"))
        #expect(applied.list.count == 1 && applied.list[0].1 == .circular)
    }

    @Test("Combining: authorized beats notDetermined beats failures; all denied is denied", arguments: [
        ([AuthorizationStatus.notDetermined, .authorized], AuthorizationStatus.authorized),
        ([.restricted(reason: "a"), .notDetermined], .notDetermined),
        ([.denied(reason: "a"), .denied(reason: "b")], .denied(reason: "no source works (source 1: a; source 2: b)")),
        ([.denied(reason: "a"), .restricted(reason: "b")], .restricted(reason: "no source works (source 1: a; source 2: b)")),
    ])
    func combining(statuses: [AuthorizationStatus], expected: AuthorizationStatus) {
        #expect(SourceAvailability.combine(statuses.map { [.beacon: $0] })[.beacon] == expected)
    }

    @Test("waitUntilDetermined returns when the last device reports, or at the timeout")
    func waiting() async {
        let availability = SourceAvailability(sources: [("hci:hci0", [.beacon: .notDetermined])]) { _, _ in }
        // Nothing reports: the timeout ends the wait.
        await availability.waitUntilDetermined(timeout: .milliseconds(50))
        #expect(!availability.isDetermined)
        let waiter = Task { await availability.waitUntilDetermined(timeout: .seconds(600)) }
        availability.report(.authorized, for: .beacon, from: "hci:hci0")
        await waiter.value
        #expect(availability.isDetermined)
    }

    @Test("Configuration: the initial statuses combine the same way; repeated names are told apart")
    func configuration() {
        let sources: [ServiceSource] = [.simulator(.init(scenario: "museum")), .hci(.init(device: "hci0")), .simulator(.init(scenario: "museum"))]
        let configuration = ServiceConfiguration(sources: sources)
        #expect(configuration.initialSourceStatuses == [.beacon: .authorized])
        #expect(configuration.uniqueSourceNames == ["simulator:museum", "hci:hci0", "simulator:museum#2"])
    }
}
