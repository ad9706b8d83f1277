import Foundation
import RegionKitConcurrency
import RegionKit

/// Runs a ``Scenario`` on a `VirtualClock`: the world produces the same observations a radio
/// would (sightings with RSSI, source on/off, location fixes), they drive a real
/// `LocationManager`, and the app behaviour reacts. Everything is seeded: the same scenario,
/// profile and seed always give the same events.
///
/// ```swift
/// let runner = try SimulationRunner(scenario: .builtIn("two-beacons")!, profile: .coreLocation)
/// let events = runner.runInstantly()                 // as fast as possible
/// try await runner.run(pace: 4) { print($0) }        // 4× real time, for a live demo
/// ```
public final class SimulationRunner: Sendable {
    public let scenario: Scenario
    public let profile: MonitoringProfile
    public let seed: UInt64
    /// The speeds paced runs and replays accept: virtual (or recorded) seconds per real second.
    public static let paceRange: ClosedRange<Double> = 0.001...1_000_000

    /// What the world does at one instant.
    public enum Item: Sendable {
        case observation(BeaconObservation)
        case fix(LocationFix)
        case action(Scenario.Action)
    }

    /// - Parameters:
    ///   - profile: overrides the scenario's profile (default: the scenario's, else responsive).
    ///   - seed: overrides the scenario's seed (default: the scenario's, else 1).
    public init(scenario: Scenario, profile: MonitoringProfile? = nil, seed: UInt64? = nil) throws {
        try scenario.validate(source: "scenario '\(scenario.name)'")
        self.scenario = scenario
        self.profile = profile ?? scenario.profile.flatMap(MonitoringProfile.named) ?? .responsive
        self.seed = seed ?? scenario.seed ?? 1
    }

    /// Runs the whole scenario without pausing and returns every event in order.
    public func runInstantly() -> [SimulationEvent] {
        let collected = LockedBox<[SimulationEvent]>([])
        let session = start { event in collected.withLock { $0.append(event) } }
        for (time, item) in session.items {
            session.clock.advance(to: Timestamp(seconds: time))
            apply(item, to: session.manager)
        }
        session.clock.advance(to: Timestamp(seconds: scenario.duration))
        return collected.withLock { $0 }
    }

    /// Runs the scenario paced against real time: `pace` virtual seconds per real second
    /// (`nil` = as fast as possible). `output` is called for each event as it happens.
    public func run(pace: Double?, output: @escaping @Sendable (SimulationEvent) -> Void) async throws {
        guard let pace, pace > 0 else {
            runInstantly().forEach(output)
            return
        }
        let session = start(output: output)
        let step = 0.1
        var items = session.items[...]
        var now = 0.0
        while now < scenario.duration {
            let next = min(now + step, scenario.duration)
            try await Task.sleep(for: .seconds(saturating: (next - now) / pace))
            while let (time, item) = items.first, time <= next {
                items = items.dropFirst()
                session.clock.advance(to: Timestamp(seconds: time))
                apply(item, to: session.manager)
            }
            session.clock.advance(to: Timestamp(seconds: next))
            now = next
        }
    }

    // MARK: - Internals

    struct Session: Sendable {
        var clock: VirtualClock
        var manager: LocationManager
        var delegate: Recorder
        var items: [(Double, Item)]
    }

    /// Forwards every event to the output and the app, and keeps the manager's delegate alive.
    final class Recorder: LocationManagerDelegate {
        let app: AppBehavior
        let output: @Sendable (SimulationEvent) -> Void

        init(app: AppBehavior, output: @escaping @Sendable (SimulationEvent) -> Void) {
            self.app = app
            self.output = output
        }

        func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
            output(.location(event))
            app.handle(event, manager: manager)
        }
    }

    private func start(output: @escaping @Sendable (SimulationEvent) -> Void) -> Session {
        let clock = VirtualClock()
        var sources: [RegionKind: AuthorizationStatus] = [.beacon: .authorized]
        if scenario.geo != nil { sources[.circular] = .authorized }
        let manager = LocationManager(profile: profile, automation: scenario.automation ?? Automation(), clock: clock, sources: sources)
        let app = AppBehavior(kind: scenario.app ?? .none) { output(.app($0)) }
        let recorder = Recorder(app: app, output: output)
        manager.delegate = recorder
        let initial = scenario.monitorAtStart.map(Set.init) ?? Set(scenario.regions.map(\.identifier))
        for spec in scenario.regions where initial.contains(spec.identifier) {
            if let region = try? spec.region() { manager.startMonitoring(for: region) }
        }
        return Session(clock: clock, manager: manager, delegate: recorder, items: timeline())
    }

    private func apply(_ item: Item, to manager: LocationManager) {
        switch item {
        case .observation(let observation):
            manager.ingest(observation)
        case .fix(let fix):
            manager.ingest(fix)
        case .action(let action):
            let region = action.region.flatMap { id in scenario.regions.first { $0.identifier == id } }.flatMap { try? $0.region() }
            switch action.action {
            case .adapterOff: manager.setSourceStatus(.restricted(reason: "Bluetooth adapter powered off"), for: .beacon)
            case .adapterOn: manager.setSourceStatus(.authorized, for: .beacon)
            case .locationOff: manager.setSourceStatus(.restricted(reason: "location source lost"), for: .circular)
            case .locationOn: manager.setSourceStatus(.authorized, for: .circular)
            case .wake: manager.wake()
            case .startMonitoring: if let region { manager.startMonitoring(for: region) }
            case .stopMonitoring: if let region { manager.stopMonitoring(for: region) }
            case .requestState: if let region { manager.requestState(for: region) }
            case .startRanging: if let beacon = region?.beaconRegion { manager.startRangingBeacons(in: beacon) }
            case .stopRanging: if let beacon = region?.beaconRegion { manager.stopRangingBeacons(in: beacon) }
            }
        }
    }

    /// Every world item in time order (seconds since the start): sightings, fixes, scripted
    /// actions (stable for equal times). Drivers other than the virtual clock (the daemon's
    /// real-time simulator source) play these.
    public func timeline() -> [(Double, Item)] {
        var items: [(Double, Int, Item)] = []
        var order = 0
        func add(_ time: Double, _ item: Item) {
            items.append((time, order, item))
            order += 1
        }
        for action in scenario.actions ?? [] where action.at <= scenario.duration { add(action.at, .action(action)) }
        let radio = scenario.radio ?? RadioModel()
        let offWindows = Scenario.Window.merged(adapterOffWindows())
        for (index, beacon) in scenario.beacons.enumerated() {
            let onWindows = beacon.on.map(Scenario.Window.merged)
            guard let uuid = UUID(flexibleString: beacon.uuid) else { continue }
            var random = SeededRandom(seed: seed, stream: UInt64(index + 1))
            let identity = BeaconIdentity(uuid: uuid, major: beacon.major, minor: beacon.minor)
            let power = beacon.measuredPower ?? IBeaconFrame.defaultMeasuredPower
            let interval = beacon.advertisingInterval ?? 0.1
            // Start at a random phase; BLE adds 0–10 ms of random delay to every advertising event.
            var t = random.uniform() * interval
            while t < scenario.duration {
                let transmitting = onWindows.map { Scenario.Window.contains(t, in: $0) } ?? true
                if transmitting && !Scenario.Window.contains(t, in: offWindows) {
                    let p = scenario.position(at: t)
                    let distance = ((p.x - beacon.x) * (p.x - beacon.x) + (p.y - beacon.y) * (p.y - beacon.y)).squareRoot()
                    if let rssi = radio.receive(measuredPower: Double(power), distance: distance, random: &random) {
                        add(t, .observation(BeaconObservation(identity: identity, rssi: rssi, measuredPower: power, timestamp: Timestamp(seconds: t))))
                    }
                }
                t += interval + random.uniform() * 0.01
            }
        }
        if let geo = scenario.geo {
            var random = SeededRandom(seed: seed, stream: 0)
            let interval = geo.fixInterval ?? 1
            let accuracy = geo.horizontalAccuracy ?? 5
            var t = 0.0
            while t < scenario.duration {
                let p = scenario.position(at: t)
                let noisyX = p.x + random.gaussian(sigma: accuracy / 2.0.squareRoot())
                let noisyY = p.y + random.gaussian(sigma: accuracy / 2.0.squareRoot())
                let distance = (noisyX * noisyX + noisyY * noisyY).squareRoot()
                let bearing = atan2(noisyX, noisyY) * 180 / .pi
                let point = Geodesy.destination(latitude: geo.latitude, longitude: geo.longitude, distance: distance, bearing: bearing)
                add(t, .fix(LocationFix(timestamp: Timestamp(seconds: t), latitude: point.latitude, longitude: point.longitude,
                                        horizontalAccuracy: accuracy, mode: .twoD)))
                t += interval
            }
        }
        return items.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { ($0.0, $0.2) }
    }

    /// Periods when the scanner's adapter is off (from adapterOff/adapterOn actions).
    func adapterOffWindows() -> [Scenario.Window] {
        var windows: [Scenario.Window] = []
        var offSince: Double?
        for action in (scenario.actions ?? []).sorted(by: { $0.at < $1.at }) {
            switch action.action {
            case .adapterOff where offSince == nil: offSince = action.at
            case .adapterOn: if let since = offSince { windows.append(.init(from: since, to: action.at)); offSince = nil }
            default: break
            }
        }
        if let since = offSince { windows.append(.init(from: since, to: .infinity)) }
        return windows
    }
}
