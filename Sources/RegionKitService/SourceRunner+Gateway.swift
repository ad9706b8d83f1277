import RegionKit
import RegionKitGateway
import RegionKitSimulation

extension SourceRunner {
    /// Replays a gateway recording in real time scaled by `speed` as it reads it, a chunk at a
    /// time (out-of-order sightings put back in order within the reorder window); returns at the
    /// end of the file. Only the chunk being replayed and the reorder window are held: the whole
    /// recording was read into memory first (a recording of millions of sightings, gigabytes),
    /// and a pipe replayed nothing until it closed.
    ///
    /// A file damaged part-way (a corrupt gzip member, a broken record) still has every sighting the
    /// reader could recover replayed (those before the damage, and after a skipped record those
    /// after it too); then the source fails with an error naming the file, how many
    /// sightings were replayed and what is wrong, so the daemon reports it (the other sources go on).
    func runGateway(_ settings: ServiceSource.Gateway) async throws {
        let speed = settings.speed ?? 1
        let reading: GatewayFileReading
        do {
            reading = try GatewayFileReader(path: settings.file).open()
        } catch {
            throw RegionKitError(.malformedInput, "gateway file \(settings.file): \(Self.reason(error))", cause: error)
        }
        var buffer = ReorderBuffer<GatewaySighting>(window: settings.reorderWindow ?? 2)
        let maximumGap = settings.maxGap ?? ReplaySession.defaultMaximumGap
        var pacer = GatewayReplayPacer(maximumGap: maximumGap)
        var ready: [GatewaySighting] = []
        var replayed = 0
        let start = manager.clock.now
        func replay(_ sightings: [GatewaySighting]) async throws {
            for sighting in sightings {
                try Task.checkCancellation()
                let wait = pacer.wait(for: sighting.timeMilliseconds, elapsed: manager.clock.now - start, speed: speed)
                if wait > 0 { try await Task.sleep(for: .seconds(saturating: wait)) }
                var observation = sighting.observation(originMilliseconds: sighting.timeMilliseconds)
                observation.timestamp = manager.clock.now
                ingest(observation)
                replayed += 1
            }
        }
        while let sightings = reading.next() {
            for sighting in sightings {
                buffer.insert(sighting, at: Timestamp(seconds: Double(sighting.timeMilliseconds) / 1000)) { ready.append($0) }
            }
            try await replay(ready)
            ready.removeAll(keepingCapacity: true)
        }
        buffer.drain { ready.append($0) }
        try await replay(ready)
        let report = reading.report
        for warning in report.warnings { logger.warning("gateway file: \(warning)", metadata: ["file": "\(settings.file)"]) }
        if pacer.shortened > 0 {
            logger.notice("gateway file: long gaps shortened", metadata: [
                "file": "\(settings.file)", "gaps": "\(pacer.shortened)", "longest-seconds": "\(pacer.longest)",
                "max-gap-seconds": "\(maximumGap)",
            ])
        }
        if let damage = report.error(path: settings.file) {
            guard replayed > 0 else {
                throw RegionKitError(.malformedInput, "gateway file \(settings.file): \(Self.reason(damage))", cause: damage)
            }
            logger.error("gateway file damaged: the sightings that could be read were replayed", metadata: [
                "file": "\(settings.file)", "sightings": "\(replayed)", "error": "\(Self.reason(damage))",
            ])
            activity.recordDecodeError("damagedFile")
            throw RegionKitError(.malformedInput, """
                gateway file \(settings.file) is damaged: \(Self.reason(damage)); the \(replayed) sightings that could be read were replayed
                """, cause: damage)
        }
        logger.info("gateway file replayed", metadata: ["file": "\(settings.file)", "sightings": "\(replayed)"])
    }

    /// The replay offset (recorded seconds after the first sighting) of each of `times`
    /// (milliseconds, in order), with every gap longer than `maximumGap` seconds shortened to it;
    /// also how many gaps were shortened and the longest (seconds) (``GatewayReplayPacer``).
    ///
    /// ```swift
    /// SourceRunner.replayOffsets([0, 500, 9_000_000_000_000], maximumGap: 60).offsets  // [0, 0.5, 60.5]
    /// ```
    public static func replayOffsets(_ times: [Int64], maximumGap: Double) -> (offsets: [Double], shortened: Int, longest: Double) {
        var pacer = GatewayReplayPacer(maximumGap: maximumGap)
        let offsets = times.map { pacer.offset(of: $0) }
        return (offsets, pacer.shortened, pacer.longest)
    }
}
