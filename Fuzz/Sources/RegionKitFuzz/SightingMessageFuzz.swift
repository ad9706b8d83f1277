import FuzzSupport
import RegionKitCore
import RegionKitGateway

/// Scanner sighting payloads from a broker: ESPresense, Theengs (OpenMQTTGateway) and RegionKit
/// scanner batches (FlatJSONReader and the batch decoder behind them). Input: a format byte, the
/// topic, a newline, the payload. Invariants: a scanner override names every sighting's scanner;
/// a decoded batch survives json()/decode.
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
    }
}
