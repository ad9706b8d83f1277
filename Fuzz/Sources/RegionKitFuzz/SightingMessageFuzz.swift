import Foundation
import FuzzSupport
import RegionKitCore
import RegionKitGateway

/// Scanner sighting payloads from a broker: ESPresense, Theengs (OpenMQTTGateway) and RegionKit
/// scanner batches (FlatJSONReader and the batch decoder behind them), and the scanners' status
/// messages (``ScannerStatusMessage``) on the format's status filter. Input: a format byte, the
/// topic, a newline, the payload. Invariants: a scanner override names every sighting's scanner;
/// a decoded batch survives json()/decode; a status read is `online` exactly when its trimmed
/// payload is `online` or empty, and names the override or the topic's level at the filter's `+`
/// (for RegionKit's scanners that level read back, ``ScannerBatch/scanner(topicLevel:)``); a name
/// read back from a level survives ``ScannerBatch/topicLevel(scanner:)`` and back.
enum SightingMessageFuzz {
    static func run(_ data: [UInt8]) {
        guard let selector = data.first else { return }
        let formats = SightingMessageFormat.allCases
        let format = formats[Int(selector) % formats.count]
        let rest = data.dropFirst()
        let newline = rest.firstIndex(of: 0x0A) ?? rest.endIndex
        let topic = String(decoding: rest[..<newline], as: UTF8.self)
        let payload = Array(rest[newline...].dropFirst())
        let now = Timestamp(seconds: 1_700_000_000)
        let override: String? = selector & 0x80 == 0 ? nil : "fuzz-scanner"
        let decoder = SightingMessageDecoder(format: format, scannerOverride: override)
        if case .sightings(let observations)? = try? decoder.decode(topic: topic, payload: payload, receivedAt: now), let override {
            guard observations.allSatisfy({ $0.scannerID == override }) else { FuzzTarget.fail("the scanner override was not applied") }
        }
        if format == .regionkit, let batch = try? ScannerBatch(json: payload) {
            guard let again = try? ScannerBatch(json: batch.json()), again == batch else {
                FuzzTarget.fail("\(batch) does not survive json()/decode")
            }
        }
        if format == .theengs { _ = try? TheengsMessage.iBeacon(manufacturerData: String(decoding: payload, as: UTF8.self)) }
        if format == .espresense { _ = ESPresenseMessage.identity(fromID: String(decoding: payload, as: UTF8.self)) }
        if let name = ScannerBatch.scanner(topicLevel: topic) {
            let level = ScannerBatch.topicLevel(scanner: name)
            let kept = level.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || "_-%".unicodeScalars.contains($0) }
            guard ScannerBatch.scanner(topicLevel: level).map({ Array($0.utf8) }) == Array(name.utf8), kept else {
                FuzzTarget.fail("\(name.debugDescription) → \(level) does not read back")
            }
        }
        let filter = format.defaultStatusFilter
        let encoded = format.encodesScannerNames
        if let status = try? ScannerStatusMessage.decode(topic: topic, payload: payload, filter: filter, scanner: override, encodedNames: encoded) {
            let word = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            guard status.online == (word == "online" || word.isEmpty), status.online || word == "offline" else {
                FuzzTarget.fail("status \(status) from '\(word)'")
            }
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            let index = filter.split(separator: "/", omittingEmptySubsequences: false).firstIndex(of: "+") ?? 0
            let level = index < levels.count ? levels[index] : ""
            guard status.scanner == override ?? (encoded ? ScannerBatch.scanner(topicLevel: level) : String(level)) else {
                FuzzTarget.fail("status names \(status.scanner) for \(topic)")
            }
        }
    }
}
