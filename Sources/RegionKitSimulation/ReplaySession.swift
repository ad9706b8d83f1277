import Foundation
import RegionKitConcurrency
import RegionKit

/// Replays recorded observations (gateway files, captures) through a real `LocationManager` on a
/// `VirtualClock`: time is the recording's own, so timers (exits, ranging) fire exactly as they
/// would have live. Paced or as fast as possible.
///
/// Paced replay waits at most ``maximumGap`` recorded seconds between two inputs: a recording that
/// jumps ahead (a scanner's clock reset, a far-future timestamp) is not slept through in real
/// time, while virtual time still moves by the whole jump (so exits fire as they would have).
/// ``shortenedGaps`` counts the jumps shortened so.
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
    private let pacing = LockedBox<Pacing>(Pacing())
    /// The longest stretch of recorded time between two inputs that paced replay waits through
    /// in real time (scaled by the pace); longer gaps are shortened to it.
    public let maximumGap: Double
    /// The default ``maximumGap``: 60 recorded seconds.
    public static let defaultMaximumGap: Double = 60

    /// Real and virtual time at the anchor of paced replay, and the gaps shortened so far.
    struct Pacing {
        var anchor: (real: Date, virtual: Timestamp)?
        var last: Timestamp?
        var shortened = 0
        var longest = 0.0
    }

    /// Gaps longer than ``maximumGap`` that paced replay shortened: how many, and the longest (seconds).
    public var shortenedGaps: (count: Int, longest: Double) {
        pacing.withLock { ($0.shortened, $0.longest) }
    }

    final class Forwarder: LocationManagerDelegate {
        let output: @Sendable (LocationEvent) -> Void
        init(output: @escaping @Sendable (LocationEvent) -> Void) { self.output = output }
        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) { output(event) }
    }

    /// Registers `regions` at t = 0 and delivers every event to `output`.
    public init(profile: MonitoringProfile, automation: Automation = Automation(), regions: [Region],
                maximumGap: Double = ReplaySession.defaultMaximumGap,
                output: @escaping @Sendable (LocationEvent) -> Void) {
        precondition(maximumGap >= 0, "maximumGap must be >= 0 seconds")
        self.maximumGap = maximumGap
        clock = VirtualClock()
        var sources: [RegionKind: AuthorizationStatus] = [.beacon: .authorized]
        if regions.contains(where: { $0.kind == .circular }) { sources[.circular] = .authorized }
        manager = LocationManager(profile: profile, automation: automation, clock: clock, sources: sources)
        delegate = Forwarder(output: output)
        manager.delegate = delegate
        manager.startMonitoring(for: regions)
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

    /// Observations in time order, fed as one batch (instant replay): the same events, in the
    /// same order, as ``feed(_:)-(BeaconObservation)`` for each — the engine fires every timer due
    /// before each observation as it reaches it — with one manager call for the batch. Virtual
    /// time then moves to the last observation.
    public func feed(contentsOf observations: [BeaconObservation]) {
        guard let last = observations.last else { return }
        manager.ingestAheadOfClock(contentsOf: observations)
        clock.advance(to: last.timestamp)
    }

    /// A location fix, paced like ``feed(_:pace:)-(BeaconObservation,_)``.
    public func feed(_ fix: LocationFix, pace: Double) async {
        if pace > 0 { await wait(until: fix.timestamp, pace: pace) }
        feed(fix)
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
        let due = pacing.withLock { pacing -> Date in
            guard let anchor = pacing.anchor, let last = pacing.last else {
                pacing.anchor = (Date(), target)
                pacing.last = target
                return Date()
            }
            let gap = target - last
            if gap > maximumGap {
                // Shorten the jump: real time moves by maximumGap / pace only.
                pacing.anchor = (anchor.real, anchor.virtual + (gap - maximumGap))
                pacing.shortened += 1
                pacing.longest = max(pacing.longest, gap)
            }
            pacing.last = max(last, target)
            let current = pacing.anchor!
            return current.real.addingTimeInterval(min((target - current.virtual) / pace, Duration.maximumSaturatingSeconds))
        }
        let delay = due.timeIntervalSinceNow
        if delay > 0 { try? await Task.sleep(for: .seconds(saturating: delay)) }
    }
}
