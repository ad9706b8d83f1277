import RegionKit
import RegionKitConcurrency

/// Judges the daemon's sources one by one. Each source reports its own availability for the region
/// kinds it feeds; the manager sees, per kind, the best of them: a region kind is monitorable while
/// **any** source feeding it works. So a Bluetooth controller that is unreachable, or a broker
/// outage, no longer restricts the beacon regions a simulator or another controller still serves.
///
/// Per kind: `authorized` if any source is; otherwise `notDetermined` while any source has not
/// reported yet; otherwise `denied` when every source is denied, else `restricted` — with every
/// source's reason, so `monitoringDidFail` says which sources are down and why.
///
/// ```swift
/// let availability = SourceAvailability(manager: service.manager, sources: [
///     ("simulator:museum", [.beacon: .authorized]), ("hci:tcp:127.0.0.1:9000", [.beacon: .notDetermined]),
/// ])
/// availability.report(.restricted(reason: "controller unreachable"), for: .beacon, from: "hci:tcp:127.0.0.1:9000")
/// availability.combined(for: .beacon)   // .authorized: the simulator still works
/// ```
public final class SourceAvailability: Sendable {
    private struct Inner {
        var order: [String] = []
        var statuses: [String: [RegionKind: AuthorizationStatus]] = [:]
        var applied: [RegionKind: AuthorizationStatus] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let inner: LockedBox<Inner>
    private let apply: @Sendable (AuthorizationStatus, RegionKind) -> Void

    /// - Parameters:
    ///   - sources: each source's name and its initial status per kind it feeds (see
    ///     ``ServiceSource/initialStatuses``); the manager must have been created with
    ///     ``combine(_:names:)`` of these.
    ///   - apply: how a changed combined status reaches the engine (the manager's `setSourceStatus`).
    public init(sources: [(name: String, statuses: [RegionKind: AuthorizationStatus])],
                apply: @escaping @Sendable (AuthorizationStatus, RegionKind) -> Void) {
        var state = Inner()
        for (name, statuses) in sources {
            if state.statuses[name] == nil { state.order.append(name) }
            state.statuses[name, default: [:]].merge(statuses) { $1 }
        }
        state.applied = Self.combine(state.order.map { state.statuses[$0] ?? [:] }, names: state.order)
        inner = LockedBox(state)
        self.apply = apply
    }

    /// Applies the combined statuses to `manager` (created with ``initialStatuses``).
    public convenience init(manager: LocationManager, sources: [(name: String, statuses: [RegionKind: AuthorizationStatus])]) {
        self.init(sources: sources) { status, kind in manager.setSourceStatus(status, for: kind) }
    }

    /// The combined status per kind before any report (what the manager starts with).
    public var initialStatuses: [RegionKind: AuthorizationStatus] { inner.withLock { $0.applied } }

    /// The combined status of `kind` now (nil: no source feeds it).
    public func combined(for kind: RegionKind) -> AuthorizationStatus? { inner.withLock { $0.applied[kind] } }

    /// What `source` last reported for each kind.
    public func statuses(of source: String) -> [RegionKind: AuthorizationStatus] { inner.withLock { $0.statuses[source] ?? [:] } }

    /// Whether every kind's combined status is known (none still `notDetermined`).
    public var isDetermined: Bool { inner.withLock { state in !state.applied.values.contains(.notDetermined) } }

    /// `source` (a name given at init, or a new one) can now deliver for `kind` or not. The manager
    /// is told only when the combined status of `kind` changes. Applied in report order.
    public func report(_ status: AuthorizationStatus, for kind: RegionKind, from source: String) {
        let waiters = inner.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.statuses[source] == nil { state.order.append(source) }
            state.statuses[source, default: [:]][kind] = status
            let combined = Self.combine(state.order.map { state.statuses[$0] ?? [:] }, names: state.order)[kind]
            if let combined, state.applied[kind] != combined {
                state.applied[kind] = combined
                // Under the lock, so two reports reach the engine in the order they were combined.
                apply(combined, kind)
            }
            guard !state.applied.values.contains(.notDetermined) else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every kind's combined status is determined, or after `timeout` (the daemon
    /// waits so that devices still connecting at start do not fail every region at once).
    public func waitUntilDetermined(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.inner.withLock { state -> Bool in
                        if !state.applied.values.contains(.notDetermined) { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // Release a waiter still parked (the timeout won).
            let parked = self.inner.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in parked { waiter.resume() }
        }
    }

    static func reason(of status: AuthorizationStatus) -> String {
        switch status {
        case .denied(let reason), .restricted(let reason): reason
        default: "\(status)"
        }
    }

    /// The combined status per kind of `sources` (each a map kind → status), as described above.
    /// `names` (parallel to `sources`) label the reasons.
    public static func combine(_ sources: [[RegionKind: AuthorizationStatus]], names: [String]? = nil) -> [RegionKind: AuthorizationStatus] {
        var byKind: [RegionKind: [(String, AuthorizationStatus)]] = [:]
        for (index, statuses) in sources.enumerated() {
            let name = names.flatMap { index < $0.count ? $0[index] : nil } ?? "source \(index + 1)"
            for (kind, status) in statuses { byKind[kind, default: []].append((name, status)) }
        }
        return byKind.mapValues { entries in
            let statuses = entries.map(\.1)
            if statuses.contains(.authorized) { return .authorized }
            if statuses.contains(.notDetermined) { return .notDetermined }
            let reasons = entries.map { name, status -> String in
                switch status {
                case .denied(let reason), .restricted(let reason): "\(name): \(reason)"
                default: "\(name): \(status)"
                }
            }
            // One source: its own reason (it names the device); several: each, named.
            let joined = entries.count == 1 ? Self.reason(of: entries[0].1) : "no source works (\(reasons.joined(separator: "; ")))"
            return statuses.allSatisfy({ if case .denied = $0 { true } else { false } }) ? .denied(reason: joined) : .restricted(reason: joined)
        }
    }
}
