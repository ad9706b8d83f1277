import RegionKit
import RegionKitGateway
import RegionKitSimulation

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
            let reader = GatewayFileReader(path: settings.file)
            let report = try reader.read { sighting in
                buffer.insert(sighting, at: Timestamp(seconds: Double(sighting.timeMilliseconds) / 1000)) { batch.append($0) }
            }
            for warning in report.warnings { logger.warning("gateway file: \(warning)", metadata: ["file": "\(settings.file)"]) }
            if let error = report.error(path: settings.file) { throw error }
        } catch {
            damage = error
        }
        buffer.drain { batch.append($0) }
        if let damage, batch.isEmpty {
            throw RegionKitError(.malformedInput, "gateway file \(settings.file): \(Self.reason(damage))", cause: damage)
        }
        if let damage {
            logger.error("gateway file damaged: replaying the sightings that could be read", metadata: [
                "file": "\(settings.file)", "sightings": "\(batch.count)", "error": "\(Self.reason(damage))",
            ])
            activity.recordDecodeError("damagedFile")
        }
        let maximumGap = settings.maxGap ?? ReplaySession.defaultMaximumGap
        let pacing = Self.replayOffsets(batch.map(\.timeMilliseconds), maximumGap: maximumGap)
        if pacing.shortened > 0 {
            logger.notice("gateway file: long gaps shortened", metadata: [
                "file": "\(settings.file)", "gaps": "\(pacing.shortened)", "longest-seconds": "\(pacing.longest)",
                "max-gap-seconds": "\(maximumGap)",
            ])
        }
        let start = manager.clock.now
        for (sighting, offset) in zip(batch, pacing.offsets) {
            try Task.checkCancellation()
            try await sleep(until: start + offset / speed)
            var observation = sighting.observation(originMilliseconds: sighting.timeMilliseconds)
            observation.timestamp = manager.clock.now
            ingest(observation)
        }
        if let damage {
            throw RegionKitError(.malformedInput, """
                gateway file \(settings.file) is damaged: \(Self.reason(damage)); the \(batch.count) sightings that could be read were replayed
                """, cause: damage)
        }
        logger.info("gateway file replayed", metadata: ["file": "\(settings.file)", "sightings": "\(batch.count)"])
    }

    /// The replay offset (recorded seconds after the first sighting) of each of `times`
    /// (milliseconds, in order), with every gap longer than `maximumGap` seconds shortened to it;
    /// also how many gaps were shortened and the longest (seconds). Differences are taken in
    /// `Double`, so timestamps of an untrusted file far apart cannot overflow.
    ///
    /// ```swift
    /// SourceRunner.replayOffsets([0, 500, 9_000_000_000_000], maximumGap: 60).offsets  // [0, 0.5, 60.5]
    /// ```
    public static func replayOffsets(_ times: [Int64], maximumGap: Double) -> (offsets: [Double], shortened: Int, longest: Double) {
        var offsets: [Double] = []
        offsets.reserveCapacity(times.count)
        var elapsed = 0.0, shortened = 0, longest = 0.0
        for (index, time) in times.enumerated() {
            if index > 0 {
                // Out of order beyond the reorder window: no wait (never a negative one).
                let gap = max(0, (Double(time) - Double(times[index - 1])) / 1000)
                if gap > maximumGap {
                    shortened += 1
                    longest = max(longest, gap)
                }
                elapsed += min(gap, maximumGap)
            }
            offsets.append(elapsed)
        }
        return (offsets, shortened, longest)
    }
}
