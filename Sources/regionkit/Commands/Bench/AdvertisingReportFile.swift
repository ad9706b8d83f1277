import Foundation
import RegionKit

/// A file of HCI LE Advertising Report events written back to back, the input of
/// `regionkit bench parse` (and of `scripts/bench-compare.sh`'s Python peers).
///
/// Each event is an HCI event packet without its H4 type byte: event code `0x3E` (LE Meta),
/// parameter length, subevent `0x02`, then Num_Reports and the reports (Core spec Vol 4 Part E
/// 7.7.65.2). The length byte frames each event, so the file needs no other structure. Reading
/// checks only the framing and the event and subevent codes; the reports themselves are left to
/// the decoders being measured. Errors name the file, the byte offset and the event's index.
///
/// ```swift
/// let file = try AdvertisingReportFile(path: "reports.hci")
/// for event in file.events {
///     if case .leMeta(.advertisingReport(let reports)) = try HCIEvent(decoding: event) { print(reports.count) }
/// }
/// ```
struct AdvertisingReportFile {
    /// LE Meta event code.
    static let eventCode: UInt8 = 0x3E
    /// LE Advertising Report subevent code.
    static let subeventCode: UInt8 = 0x02

    let path: String
    /// One array per event, each ready for `HCIEvent(decoding:)`.
    let events: [[UInt8]]

    init(path: String) throws(RegionKitError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RegionKitError(.malformedInput, "\(path): cannot read the reports file", cause: error.localizedDescription)
        }
        try self.init(bytes: [UInt8](data), path: path)
    }

    /// Frames `bytes` (the contents of `path`) into events.
    init(bytes: [UInt8], path: String) throws(RegionKitError) {
        guard !bytes.isEmpty else {
            throw RegionKitError(.malformedInput, "\(path): the reports file is empty (expected HCI LE Advertising Report events)")
        }
        var events: [[UInt8]] = []
        events.reserveCapacity(bytes.count / 40)
        var offset = 0
        while offset < bytes.count {
            let index = events.count
            guard bytes.count - offset >= 4 else {
                throw RegionKitError(.malformedInput,
                    "\(path): offset \(offset): event \(index) is truncated: \(bytes.count - offset) byte(s) left, an advertising report event needs at least 4")
            }
            let code = bytes[offset], length = Int(bytes[offset + 1]), subevent = bytes[offset + 2]
            guard code == Self.eventCode else {
                throw RegionKitError(.malformedInput,
                    String(format: "%@: offset %d: event %d has event code 0x%02X, expected 0x3E (LE Meta)", path, offset, index, code))
            }
            guard length >= 2 else {
                throw RegionKitError(.malformedInput,
                    "\(path): offset \(offset + 1): event \(index) has parameter length \(length), too short for an advertising report (subevent and Num_Reports)")
            }
            guard subevent == Self.subeventCode else {
                throw RegionKitError(.malformedInput,
                    String(format: "%@: offset %d: event %d has LE subevent 0x%02X, expected 0x02 (LE Advertising Report)", path, offset + 2, index, subevent))
            }
            let end = offset + 2 + length
            guard end <= bytes.count else {
                throw RegionKitError(.malformedInput,
                    "\(path): offset \(offset): event \(index) declares \(length) parameter byte(s) but only \(bytes.count - offset - 2) remain in the file")
            }
            events.append(Array(bytes[offset..<end]))
            offset = end
        }
        self.path = path
        self.events = events
    }
}
