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
/// do not decode (a filtered Android log truncates packets), are counted and skipped; a capture
/// cut off mid-record (a crash) keeps every record before the cut, with ``truncation`` saying where.
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
    /// The capture's first record, microseconds since the Unix epoch (nil for an empty capture).
    public var firstRecordUnixMicroseconds: Int64?
    /// Set when the file ends in a truncated or garbled record: the records before it were used.
    public var truncation: HCIError?

    /// Decodes a capture's bytes.
    public init(bytes: [UInt8], timeOrigin: TimeOrigin = .firstRecord, layout: LEAdvertisingReportLayout = .reportByReport,
                repeatWindow: Double = ScanResponseDeduplicator.defaultWindow) throws(BluetoothError) {
        let decoded: (file: BTSnoopFile, error: HCIError?)
        do {
            decoded = try BTSnoopFile.decodePrefix(bytes)
        } catch {
            throw BluetoothError(.captureFailed, "not a readable btsnoop capture: \(error.message)", cause: error)
        }
        datalink = decoded.file.datalink
        truncation = decoded.error
        guard datalink == .h4 || datalink == .unencapsulatedHCI else {
            throw BluetoothError(.captureFailed, "btsnoop datalink \(datalink) is not supported (only 1001 unencapsulated HCI and 1002 H4)")
        }
        records = decoded.file.records.count
        firstRecordUnixMicroseconds = decoded.file.records.first?.unixMicroseconds
        let origin = timeOrigin == .firstRecord ? (firstRecordUnixMicroseconds ?? 0) : 0
        var found: [AdvertisementSighting] = []
        var pipeline = BeaconReportPipeline(scannerID: nil, deduplicator: ScanResponseDeduplicator(window: repeatWindow), layout: layout)
        for record in decoded.file.records {
            guard let packet = try? record.packet(datalink: datalink) else {
                skippedRecords += 1
                continue
            }
            guard packet.type == .event else { continue }
            guard let event = try? packet.event(advertisingReportLayout: layout) else {
                skippedRecords += 1
                continue
            }
            let time = Timestamp(seconds: Double(record.unixMicroseconds - origin) / 1_000_000)
            pipeline.process(event, at: time, sighting: { found.append($0) }) { _ in }
        }
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
