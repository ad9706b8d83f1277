import RegionKit
import RegionKitGateway

extension SourceRunner {
    /// Reads the whole recording (putting out-of-order sightings back in order within the reorder
    /// window), then replays it in real time scaled by `speed`; returns at the end of the file.
    ///
    /// A file damaged part-way (a corrupt gzip member, a broken record) still has every sighting the
    /// reader could recover replayed (those before the damage, and after a skipped record those
    /// after it too); then the source fails with an error naming the file, how many
    /// sightings were read and what is wrong, so the daemon reports it (the other sources go on).
    func runGateway(_ settings: ServiceSource.Gateway) async throws {
        let speed = settings.speed ?? 1
        var buffer = ReorderBuffer<GatewaySighting>(window: settings.reorderWindow ?? 2)
        var batch: [GatewaySighting] = []
        var damage: (any Error)?
        do {
            _ = try GatewayFileReader(path: settings.file).forEach { sighting in
                batch += buffer.insert(sighting, at: Timestamp(seconds: Double(sighting.timeMilliseconds) / 1000))
            }
        } catch {
            damage = error
        }
        batch += buffer.drain()
        if let damage, batch.isEmpty {
            throw RegionKitError(.malformedInput, "gateway file \(settings.file): \(Self.reason(damage))", cause: damage)
        }
        if let damage {
            logger.error("gateway file damaged: replaying the sightings that could be read", metadata: [
                "file": "\(settings.file)", "sightings": "\(batch.count)", "error": "\(Self.reason(damage))",
            ])
            activity.recordDecodeError("damagedFile")
        }
        if let first = batch.first {
            let start = manager.clock.now
            for sighting in batch {
                try Task.checkCancellation()
                // Saturating: recorded times far apart must not overflow (the file is untrusted).
                let (offset, overflow) = sighting.timeMilliseconds.subtractingReportingOverflow(first.timeMilliseconds)
                try await sleep(until: start + (overflow ? 0 : Double(offset)) / 1000 / speed)
                var observation = sighting.observation(originMilliseconds: sighting.timeMilliseconds)
                observation.timestamp = manager.clock.now
                ingest(observation)
            }
        }
        if let damage {
            throw RegionKitError(.malformedInput, """
                gateway file \(settings.file) is damaged: \(Self.reason(damage)); the \(batch.count) sightings that could be read were replayed
                """, cause: damage)
        }
        logger.info("gateway file replayed", metadata: ["file": "\(settings.file)", "sightings": "\(batch.count)"])
    }
}
