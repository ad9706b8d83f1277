import FuzzSupport
import RegionKitBluetooth
import RegionKitHCI

/// btsnoop captures: the record reader and the advertising log built on it. Invariant: records are
/// never lost to later bytes — the records decoded from any prefix of a capture are a prefix of the
/// records decoded from the whole capture.
enum BTSnoopFuzz {
    static func run(_ data: [UInt8]) {
        for layout in [LEAdvertisingReportLayout.reportByReport, .fieldArrays] {
            for origin in [BTSnoopAdvertisingLog.TimeOrigin.firstRecord, .unixEpoch] {
                if let log = try? BTSnoopAdvertisingLog(bytes: data, timeOrigin: origin, layout: layout) {
                    _ = log.observations(scannerID: "fuzz")
                }
            }
        }
        guard let whole = try? BTSnoopFile.decodePrefix(data) else { return }
        let cut = data.isEmpty ? 0 : Int(data[data.count / 2]) % (data.count + 1)
        guard cut >= BTSnoopReader.headerSize, let prefix = try? BTSnoopFile.decodePrefix(Array(data[..<cut])) else { return }
        guard whole.file.records.starts(with: prefix.file.records) else {
            FuzzTarget.fail("the first \(cut) bytes decode to records the whole capture does not start with")
        }
    }
}
