import RegionKitCore

/// A beacon's room and its regions agree on when it is gone.
extension MonitoringEngine {
    /// The latest time a stream of `identity` in a beacon region it is inside of counts as gone
    /// (the time that region's exit waits for, as far as this beacon is concerned), or `nil` when
    /// no such region holds a stream of it.
    ///
    /// A beacon leaves its room (``NearestScannerState``) once no scanner track of it is alive
    /// under the exit detector, but a scanner that hears it only now and then loses its track
    /// under the room's quick rule between sightings, and a track starts from the quick rule's
    /// prior while the region's stream learned the scanner's real rhythm. So the room went
    /// `not_home` long before the beacon's regions exited (a 2 Hz kitchen and a hall every 14 s:
    /// the room at 28 s, the region at 50 s; a Home Assistant tracker away while its presence
    /// sensor stayed on). The absence, when it comes due, waits for this time too.
    ///
    /// Asked only when an absence comes due, never on the sighting path. A region's streams are
    /// walked when it has no more of them than the engine knows scanners, else looked up by each
    /// scanner's name: at most min(streams, scanners) per matching region.
    mutating func regionStreamsDeadline(of identity: BeaconIdentity) -> Timestamp? {
        guard let (any, major, exact) = beaconIndex.candidates(for: identity, in: regions) else { return nil }
        let detector = profile.exitDetector
        let scanners = channelNumbers
        var latest: Timestamp?
        for matches in [any, major, exact] {
            for registered in matches {
                let deadline = regions.readStreams(slot: Int(registered.slot)) { record, streams -> Timestamp? in
                    guard record.state == .inside, case .beacon = record.region, !streams.isEmpty else { return nil }
                    return Self.latestDeadline(of: identity, in: streams, origin: record.registeredAt, detector: detector, scanners: scanners)
                } ?? nil
                if let deadline, latest.map({ deadline > $0 }) ?? true { latest = deadline }
            }
        }
        return latest
    }

    /// The latest gone-deadline of `identity`'s streams among `streams` (each scanner's, and the
    /// one without a scanner).
    private static func latestDeadline(of identity: BeaconIdentity, in streams: RegionStreams, origin: Timestamp,
                                       detector: ExitDetector, scanners: ScannerNumbers) -> Timestamp? {
        var latest: Timestamp?
        func consider(_ deadline: Timestamp) {
            if latest.map({ deadline > $0 }) ?? true { latest = deadline }
        }
        if streams.count <= scanners.count + 1 {
            streams.forEachStream { key, stream, known in
                guard key.identity == identity else { return }
                consider(known ?? detector.goneDeadline(for: stream, gridOrigin: origin))
            }
            return latest
        }
        if let stream = streams[MonitoredRegion.StreamKey(identity: identity, scannerID: nil)] {
            consider(detector.goneDeadline(for: stream, gridOrigin: origin))
        }
        for (name, _) in scanners {
            if let stream = streams[MonitoredRegion.StreamKey(identity: identity, scannerID: name)] {
                consider(detector.goneDeadline(for: stream, gridOrigin: origin))
            }
        }
        return latest
    }
}
