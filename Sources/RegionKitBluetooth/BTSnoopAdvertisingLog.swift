import Foundation
import RegionKitCore
import RegionKitHCI

/// The advertising frames in a btsnoop capture, with their recorded times: what a
/// ``BeaconScanner`` would have counted had it been scanning then. Reads RegionKit's own captures,
/// Bumble's snoop files and Android's
/// `btsnoop_hci.log` (datalink 1002 H4, or 1001 unencapsulated).
///
/// Every event record is decoded whichever direction bit it has (controller-side captures such
/// as Bumble's have them reversed; the H4 type byte decides). Legacy and extended advertising
/// reports become ``AdvertisementSighting``s, with scan-response repeats dropped by a
/// ``ScanResponseDeduplicator`` on the recorded times. Records that are not events, or events that
/// do not decode (a filtered Android log truncates packets), are counted and skipped; a garbled
/// record is passed over to the next intact one, and a capture cut off mid-record (a crash) keeps
/// every record before the cut: ``damage`` says what was skipped and where.
///
/// ```swift
/// let log = try BTSnoopAdvertisingLog(contentsOfFile: "btsnoop_hci.log")
/// print(log.sightings.count, "frames,", log.skippedRecords, "records skipped")
/// for observation in log.observations(scannerID: nil) { manager.ingest(observation) }
/// ```
public struct BTSnoopAdvertisingLog: Sendable {
    /// Where ``AdvertisementSighting/timestamp`` counts from.
    public enum TimeOrigin: Sendable {
        /// Seconds since the capture's first record (replays: the recording's own time).
        case firstRecord
        /// Seconds since the Unix epoch (as recorded).
        case unixEpoch
    }

    public var datalink: BTSnoopDatalink
    /// Frames in recorded order.
    public var sightings: [AdvertisementSighting] = []
    /// Records in the file (intact ones).
    public var records = 0
    /// Advertising reports found, including scan-response repeats.
    public var reports = 0
    /// Scan-response repeats dropped.
    public var scanResponseRepeats = 0
    /// Event records that did not decode; non-event records are not counted here.
    public var skippedRecords = 0
    /// Byte offset of the first of ``skippedRecords`` in the file.
    public var firstSkippedRecordOffset: Int?
    /// Garbled stretches skipped and a damaged end (see `BTSnoopDamage`).
    public var damage = BTSnoopDamage()
    /// Records left out for a time over a day from the records around them (a damaged timestamp,
    /// see `TimestampOutlierFilter`); counted in ``records`` too.
    public var timeOutliers = 0
    /// Byte offset of the first of ``timeOutliers``.
    public var firstTimeOutlierOffset: Int?
    /// How far (µs) a record's time may be from both records around it: a day.
    static let outlierMicroseconds = 86_400_000_000.0
    /// The capture's first record kept, microseconds since the Unix epoch (nil for an empty capture).
    public var firstRecordUnixMicroseconds: Int64?
    /// Set when the file ends in a truncated or garbled record: the records before it were used
    /// (``damage``'s `BTSnoopDamage.end`).
    public var truncation: HCIError? { damage.end }

    /// Decodes a capture's bytes.
    public init(bytes: [UInt8], timeOrigin: TimeOrigin = .firstRecord, layout: LEAdvertisingReportLayout = .reportByReport,
                repeatWindow: Double = ScanResponseDeduplicator.defaultWindow) throws(BluetoothError) {
        var reader: BTSnoopReader
        do {
            reader = try BTSnoopReader(bytes: bytes)
        } catch {
            throw BluetoothError(.captureFailed, "not a readable btsnoop capture: \(error.message)", cause: error)
        }
        datalink = reader.datalink
        guard datalink == .h4 || datalink == .unencapsulatedHCI else {
            throw BluetoothError(.captureFailed, "btsnoop datalink \(datalink) is not supported (only 1001 unencapsulated HCI and 1002 H4)")
        }
        var found: [AdvertisementSighting] = []
        var pipeline = BeaconReportPipeline(scannerID: nil, deduplicator: ScanResponseDeduplicator(window: repeatWindow), layout: layout)
        // A record whose time is over a day from the records around it is a damaged timestamp (a
        // flipped bit): left out, so that it is neither the replay's origin (the first record's
        // collapsed a 120 s capture into one exit) nor a jump of the engine's clock.
        var outliers = TimestampOutlierFilter<(record: BTSnoopRecord, start: Int)>(threshold: Self.outlierMicroseconds)
        func process(_ kept: (record: BTSnoopRecord, start: Int), _: Double) {
            let (record, start) = kept
            if firstRecordUnixMicroseconds == nil { firstRecordUnixMicroseconds = record.unixMicroseconds }
            func skip() {
                skippedRecords += 1
                if firstSkippedRecordOffset == nil { firstSkippedRecordOffset = start }
            }
            guard let packet = try? record.packet(datalink: datalink) else {
                skip()
                return
            }
            guard packet.type == .event else { return }
            guard let event = try? packet.event(advertisingReportLayout: layout) else {
                skip()
                return
            }
            let zero = timeOrigin == .firstRecord ? (firstRecordUnixMicroseconds ?? 0) : 0
            // In Double: two records' times can be any Int64s, whose difference may not fit one.
            let time = Timestamp(seconds: (Double(record.unixMicroseconds) - Double(zero)) / 1_000_000)
            pipeline.process(event, at: time, sighting: { found.append($0) }) { _ in }
        }
        while true {
            let start = reader.offset
            let record: BTSnoopRecord
            do {
                guard let next = try reader.next() else { break }
                record = next
            } catch {
                // A garbled record: go on from the next intact one, or stop at a damaged end.
                if let skipped = reader.resynchronize() {
                    damage.noteGarbled(error, skippedBytes: skipped)
                    continue
                }
                damage.noteEnd(error, at: start, remainingBytes: bytes.count - start)
                break
            }
            records += 1
            outliers.insert((record, start), time: Double(record.unixMicroseconds), offset: start, release: process)
        }
        outliers.finish(release: process)
        timeOutliers = outliers.dropped
        firstTimeOutlierOffset = outliers.firstDropped?.offset
        sightings = found
        reports = pipeline.statistics.reports
        scanResponseRepeats = pipeline.statistics.scanResponseRepeats
    }

    /// Reads and decodes the capture at `path`.
    public init(contentsOfFile path: String, timeOrigin: TimeOrigin = .firstRecord, layout: LEAdvertisingReportLayout = .reportByReport,
                repeatWindow: Double = ScanResponseDeduplicator.defaultWindow) throws(BluetoothError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BluetoothError(.captureFailed, "cannot read the capture '\(path)' (missing or unreadable)")
        }
        do {
            try self.init(bytes: Array(data), timeOrigin: timeOrigin, layout: layout, repeatWindow: repeatWindow)
        } catch {
            throw BluetoothError(error.code, "\(path): \(error.message)", cause: error.cause)
        }
    }

    /// The iBeacon frames with an RSSI, as observations at their recorded times.
    public func observations(scannerID: String?) -> [BeaconObservation] {
        sightings.compactMap { $0.observation(scannerID: scannerID) }
    }
}
