import RegionKitCore
import RegionKitHCI

/// Turns HCI LE advertising report events into beacon observations: the scanner's per-event work
/// (statistics, scan-response de-duplication, iBeacon decoding), as a plain value.
///
/// ```swift
/// var pipeline = BeaconReportPipeline(scannerID: "hall")
/// pipeline.process(event: eventBytes, at: now) { observation in manager.ingest(observation) }
/// ```
public struct BeaconReportPipeline: Sendable {
    public var scannerID: String?
    public var deduplicator: ScanResponseDeduplicator
    public var statistics = ScanStatistics()
    /// How legacy reports with several reports per event are laid out (see ``LEAdvertisingReportLayout``).
    public var layout: LEAdvertisingReportLayout

    public init(scannerID: String?, deduplicator: ScanResponseDeduplicator = ScanResponseDeduplicator(),
                layout: LEAdvertisingReportLayout = .fieldArrays) {
        self.scannerID = scannerID
        self.deduplicator = deduplicator
        self.layout = layout
    }

    /// Processes one HCI event packet (event code, length, parameters): every iBeacon it reports
    /// is passed to `observation`. Events that are not advertising reports, and malformed ones,
    /// are ignored (the command channel reports those).
    public mutating func process(event: UnsafeRawBufferPointer, at time: Timestamp, _ observation: (BeaconObservation) -> Void) {
        guard let decoded = try? HCIEvent(decoding: Array(event), advertisingReportLayout: layout) else { return }
        process(decoded, at: time, sighting: nil, observation)
    }

    /// Processes a decoded event; `sighting` also receives every advertisement that is not a
    /// repeated scan response (for `regionkit scan`-style listings).
    public mutating func process(_ event: HCIEvent, at time: Timestamp, sighting: ((AdvertisementSighting) -> Void)?,
                                 _ observation: (BeaconObservation) -> Void) {
        for advertisement in event.advertisements {
            statistics.reports += 1
            if deduplicator.isRepeat(advertisement, at: time) {
                statistics.scanResponseRepeats += 1
                continue
            }
            statistics.frames += 1
            if statistics.firstFrame == nil { statistics.firstFrame = time }
            statistics.lastFrame = time
            let decoded = AdvertisementSighting(advertisement: advertisement, timestamp: time)
            if decoded.iBeacon != nil { statistics.iBeaconFrames += 1 }
            if let found = decoded.observation(scannerID: scannerID) {
                statistics.observations += 1
                observation(found)
            }
            sighting?(decoded)
        }
    }
}
