import RegionKit
import RegionKitSimulation

extension SourceRunner {
    /// Plays the scenario's timeline in real time (scaled by `speed`), stamping each item with the
    /// manager's clock; repeats if asked, then idles until cancelled.
    func runSimulator(_ settings: ServiceSource.Simulator) async throws {
        let scenario = try Scenario.builtInOrFile(settings.scenario)
        let runner = try SimulationRunner(scenario: scenario, seed: settings.seed)
        let items = runner.timeline()
        let speed = settings.speed ?? 1
        repeat {
            let start = manager.clock.now
            for (time, item) in items {
                try await sleep(until: start + time / speed)
                switch item {
                case .observation(var observation):
                    observation.timestamp = manager.clock.now
                    ingest(observation)
                case .fix(var fix):
                    fix.timestamp = manager.clock.now
                    ingest(fix)
                case .action(let action):
                    switch action.action {
                    case .adapterOff: report(.restricted(reason: "simulated adapter off"), for: .beacon)
                    case .adapterOn: report(.authorized, for: .beacon)
                    case .wake: manager.wake()
                    default: break
                    }
                }
            }
            try await sleep(until: start + scenario.duration / speed)
        } while settings.repeat == true && !Task.isCancelled
        try await Self.untilCancelled()
    }

    /// Sleeps until the manager's clock reads `due` (returns at once when it is past).
    func sleep(until due: Timestamp) async throws {
        let wait = due - manager.clock.now
        if wait > 0 { try await Task.sleep(for: .seconds(saturating: wait)) }
    }
}
