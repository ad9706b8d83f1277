import RegionKitConcurrency
import RegionKit

/// The simulated app: reacts to delegate events like the spec's example apps and reports what it
/// did as ``AppAction``s.
///
/// - `museum` (spec §3): shows an exhibit's page, keyed by major, when the nearest ranged beacon
///   has been `near` (or closer) for two consecutive deliveries; dismisses it after two without.
/// - `store-coupon` (spec §3): on entering, ranges once, sends one notification for the first
///   beacon whose proximity is known, stops ranging; once per entry.
///
/// ```swift
/// let app = AppBehavior(kind: .museum) { action in print(action.message) }
/// app.handle(event, manager: manager)
/// ```
public final class AppBehavior: Sendable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case none
        case museum
        case storeCoupon = "store-coupon"
    }

    private struct State {
        var shownExhibit: UInt16?
        var candidate: UInt16?
        var candidateCount = 0
        var missCount = 0
        var notified: Set<String> = []
        /// The regions the coupon app ranges, by identifier: it stops the one that notified.
        var ranged: [String: BeaconRegion] = [:]
    }

    public let kind: Kind
    private let report: @Sendable (AppAction) -> Void
    private let state = LockedBox(State())

    /// Consecutive deliveries needed before showing or dismissing an exhibit (spec §3: "deciding
    /// near needs smoothing").
    public static let museumConfirmations = 2

    public init(kind: Kind, report: @escaping @Sendable (AppAction) -> Void) {
        self.kind = kind
        self.report = report
    }

    public func handle(_ event: LocationEvent, manager: LocationManager) {
        switch kind {
        case .none: return
        case .museum: museum(event)
        case .storeCoupon: coupon(event, manager: manager)
        }
    }

    private func museum(_ event: LocationEvent) {
        let now = event.timestamp
        switch event.kind {
        case .didRangeBeacons(let beacons, _, let label):
            let nearest = beacons.first { $0.proximity == .near || $0.proximity == .immediate }
            let actions = state.withLock { state -> [AppAction] in
                var actions: [AppAction] = []
                if let nearest {
                    state.missCount = 0
                    if nearest.major == state.candidate { state.candidateCount += 1 } else { state.candidate = nearest.major; state.candidateCount = 1 }
                    if state.candidateCount >= Self.museumConfirmations, state.shownExhibit != nearest.major {
                        if let shown = state.shownExhibit {
                            actions.append(AppAction(timestamp: now, name: "exhibitDismissed", region: label, message: "exhibit \(shown) dismissed"))
                        }
                        state.shownExhibit = nearest.major
                        actions.append(AppAction(timestamp: now, name: "exhibitShown", region: label,
                                                 message: "exhibit \(nearest.major) shown (nearest beacon \(nearest.proximity.rawValue), ~\(Self.metres(nearest.accuracy)))"))
                    }
                } else {
                    state.candidate = nil
                    state.candidateCount = 0
                    state.missCount += 1
                    if state.missCount >= Self.museumConfirmations, let shown = state.shownExhibit {
                        state.shownExhibit = nil
                        actions.append(AppAction(timestamp: now, name: "exhibitDismissed", region: label, message: "exhibit \(shown) dismissed (no beacon near)"))
                    }
                }
                return actions
            }
            actions.forEach(report)
        case .didExitRegion(let region):
            let shown = state.withLock { state -> UInt16? in
                defer { state.shownExhibit = nil; state.candidate = nil; state.candidateCount = 0 }
                return state.shownExhibit
            }
            if let shown {
                report(AppAction(timestamp: now, name: "exhibitDismissed", region: region.identifier, message: "exhibit \(shown) dismissed (left \(region.identifier))"))
            }
        default:
            return
        }
    }

    private func coupon(_ event: LocationEvent, manager: LocationManager) {
        let now = event.timestamp
        switch event.kind {
        case .didEnterRegion(let region):
            guard case .beacon(let beacon) = region else { return }
            state.withLock {
                _ = $0.notified.remove(region.identifier)
                $0.ranged[region.identifier] = beacon
            }
            manager.startRangingBeacons(in: beacon)
            report(AppAction(timestamp: now, name: "rangingStarted", region: region.identifier, message: "entered \(region.identifier): ranging once for a coupon"))
        case .didExitRegion(let region):
            state.withLock { _ = $0.notified.remove(region.identifier) }
        case .didRangeBeacons(let beacons, _, let label):
            guard let beacon = beacons.first(where: { $0.proximity != .unknown }) else { return }
            let (first, ranged) = state.withLock { ($0.notified.insert(label).inserted, $0.ranged.removeValue(forKey: label)) }
            guard first else { return }
            report(AppAction(timestamp: now, name: "notification", region: label,
                             message: "coupon notification for major \(beacon.major) minor \(beacon.minor) (\(beacon.proximity.rawValue))"))
            // That region's ranging only: another region of the same UUID goes on (its own coupon).
            // A delivery of a ranging the app did not start (the engine's helper) is not the app's to stop.
            guard let ranged else { return }
            manager.stopRangingBeacons(in: ranged)
            report(AppAction(timestamp: now, name: "rangingStopped", region: label, message: "ranging stopped after one notification"))
        default:
            return
        }
    }

    static func metres(_ accuracy: Double) -> String {
        accuracy < 0 ? "unknown distance" : "\((accuracy * 10).rounded() / 10) m"
    }
}
