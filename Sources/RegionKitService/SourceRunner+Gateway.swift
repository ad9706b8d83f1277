import RegionKit
import RegionKitGateway

extension SourceRunner {
    /// Reads the whole recording (putting out-of-order sightings back in order within the reorder
    /// window), then replays it in real time scaled by `speed`; returns at the end of the file.
    func runGateway(_ settings: ServiceSource.Gateway) async throws {
        let speed = settings.speed ?? 1
        var buffer = ReorderBuffer<GatewaySighting>(window: settings.reorderWindow ?? 2)
        var batch: [GatewaySighting] = []
        try GatewayFileReader(path: settings.file).forEach { sighting in
            batch += buffer.insert(sighting, at: Timestamp(seconds: Double(sighting.timeMilliseconds) / 1000))
        }
        batch += buffer.drain()
        guard let first = batch.first else { return }
        let start = manager.clock.now
        for sighting in batch {
            try Task.checkCancellation()
            try await sleep(until: start + Double(sighting.timeMilliseconds - first.timeMilliseconds) / 1000 / speed)
            var observation = sighting.observation(originMilliseconds: sighting.timeMilliseconds)
            observation.timestamp = manager.clock.now
            ingest(observation)
        }
        logger.info("gateway file replayed", metadata: ["file": "\(settings.file)", "sightings": "\(batch.count)"])
    }
}
