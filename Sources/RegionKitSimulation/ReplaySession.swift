import Foundation
import Synchronization
import RegionKit

/// Replays recorded observations (gateway files, captures) through a real ``LocationManager`` on a
/// ``VirtualClock``: time is the recording's own, so timers (exits, ranging) fire exactly as they
/// would have live. Paced or as fast as possible.
///
/// ```swift
/// let replay = ReplaySession(profile: .responsive, regions: regions) { print($0.jsonLine(origin: .zero)) }
/// for observation in recorded { replay.feed(observation) }        // or `await replay.feed(observation, pace: 1)`
/// replay.finish(tail: 60)
/// ```
public final class ReplaySession: Sendable {
    public let clock: VirtualClock
    public let manager: LocationManager
    private let delegate: Forwarder
    private let started = Mutex<(real: Date, virtual: Timestamp)?>(nil)

    final class Forwarder: LocationManagerDelegate {
        let output: @Sendable (LocationEvent) -> Void
        init(output: @escaping @Sendable (LocationEvent) -> Void) { self.output = output }
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) { output(event) }
    }

    /// Registers `regions` at t = 0 and delivers every event to `output`.
    public init(profile: MonitoringProfile, automation: Automation = Automation(), regions: [Region],
                output: @escaping @Sendable (LocationEvent) -> Void) {
        clock = VirtualClock()
        var sources: [RegionKind: AuthorizationStatus] = [.beacon: .authorized]
        if regions.contains(where: { $0.kind == .circular }) { sources[.circular] = .authorized }
        manager = LocationManager(profile: profile, automation: automation, clock: clock, sources: sources)
        delegate = Forwarder(output: output)
        manager.delegate = delegate
        for region in regions { manager.startMonitoring(for: region) }
    }

    /// Sleeps so that `pace` recorded seconds pass per real second, then feeds the observation.
    public func feed(_ observation: BeaconObservation, pace: Double) async {
        if pace > 0 { await wait(until: observation.timestamp, pace: pace) }
        clock.advance(to: observation.timestamp)
        manager.ingest(observation)
    }

    /// Moves virtual time to the observation (firing due timers) and ingests it (instant replay).
    public func feed(_ observation: BeaconObservation) {
        clock.advance(to: observation.timestamp)
        manager.ingest(observation)
    }

    /// A location fix, like ``feed(_:)-(BeaconObservation)``.
    public func feed(_ fix: LocationFix) {
        clock.advance(to: fix.timestamp)
        manager.ingest(fix)
    }

    /// Lets `tail` more seconds pass after the last input, so exits at the end of the recording fire.
    public func finish(tail: Double) {
        clock.advance(by: max(0, tail))
    }

    private func wait(until target: Timestamp, pace: Double) async {
        let anchor = started.withLock { anchor -> (real: Date, virtual: Timestamp) in
            if let anchor { return anchor }
            let new = (Date(), target)
            anchor = new
            return new
        }
        let due = anchor.real.addingTimeInterval((target - anchor.virtual) / pace)
        let delay = due.timeIntervalSinceNow
        if delay > 0 { try? await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
    }
}
