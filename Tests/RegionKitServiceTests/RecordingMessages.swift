import Foundation
import RegionKitCore
import RegionKitGateway

/// The real gateway recordings turned into what ESPresense nodes and Theengs gateways would have
/// published for the same sightings (a test helper: the recordings themselves are real, the
/// conversion is ours). ESPresense: `espresense/devices/<id>/<room>` with `id`, `rssi`, `rssi@1m`;
/// Theengs: `home/<gateway>/BTtoMQTT/<mac>` with the raw `manufacturerdata` of the iBeacon frame.
enum RecordingMessages {
    struct Message {
        var topic: String
        var payload: [UInt8]
        /// Seconds since the recording's first sighting.
        var time: Double
    }

    static func messages(_ recording: GatewayRecording, format: SightingMessageFormat) -> [Message] {
        recording.sightings.map { sighting in
            let time = Double(sighting.timeMilliseconds - recording.originMilliseconds) / 1000
            switch format {
            case .espresense:
                let id = ESPresenseMessage.id(for: sighting.identity)
                var json = #"{"id":"\#(id)","rssi":\#(sighting.rssi)"#
                if let power = sighting.measuredPower { json += #","rssi@1m":\#(power)"# }
                json += #","mac":"\#(mac(sighting.identity))","int":100}"#
                return Message(topic: "espresense/devices/\(id)/\(sighting.scannerID)", payload: Array(json.utf8), time: time)
            case .theengs:
                let frame = IBeaconFrame(identity: sighting.identity, measuredPower: sighting.measuredPower.map { Int8($0) } ?? 0)
                let json = #"{"id":"\#(mac(sighting.identity, colons: true))","mac_type":0,"rssi":\#(sighting.rssi),"manufacturerdata":"\#(TheengsMessage.manufacturerData(for: frame))"}"#
                return Message(topic: "home/\(sighting.scannerID)/BTtoMQTT/\(mac(sighting.identity))", payload: Array(json.utf8), time: time)
            case .regionkit:
                let batch = ScannerBatch(scanner: sighting.scannerID, time: Double(sighting.timeMilliseconds) / 1000,
                                         sightings: [.init(identity: sighting.identity, rssi: sighting.rssi, measuredPower: sighting.measuredPower, offset: 0)])
                return Message(topic: ScannerBatch.topic(scanner: sighting.scannerID), payload: batch.json(), time: time)
            }
        }
    }

    /// A stable made-up MAC per beacon (the recordings have none).
    static func mac(_ identity: BeaconIdentity, colons: Bool = false) -> String {
        let bytes = [0xC0, UInt8(truncatingIfNeeded: identity.uuid.uuid.15), UInt8(identity.major >> 8), UInt8(identity.major & 0xFF),
                     UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
        return bytes.map { String(format: "%02X", $0) }.joined(separator: colons ? ":" : "")
    }
}
