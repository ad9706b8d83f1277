import FuzzSupport
import RegionKitHCI

/// HCI event packets (event code, parameter length, parameters) and HCI command packets, with both
/// advertising-report layouts. Invariant: a decoded event re-encodes to bytes that decode to the same event.
enum HCIEventFuzz {
    static func run(_ data: [UInt8]) {
        for layout in [LEAdvertisingReportLayout.fieldArrays, .reportByReport] {
            guard let event = try? HCIEvent(decoding: data, advertisingReportLayout: layout) else { continue }
            let encoded = event.encoded(advertisingReportLayout: layout)
            guard let again = try? HCIEvent(decoding: encoded, advertisingReportLayout: layout), again == event else {
                FuzzTarget.fail("\(layout): \(event) does not survive encode/decode")
            }
            _ = event.advertisements.map { "\($0)" }
        }
        _ = try? HCICommand(decoding: data)
        _ = try? LEFeatures(returnParameters: data)
    }
}
