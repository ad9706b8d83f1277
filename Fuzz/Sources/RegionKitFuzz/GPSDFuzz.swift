import FuzzSupport
import RegionKitLocation

/// gpsd JSON, one message per line (TPV, SKY, DEVICES, VERSION, ERROR, anything else).
enum GPSDFuzz {
    static func run(_ data: [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let message = try? GPSDMessage.decode(line, lineNumber: index + 1) {
                _ = "\(message)"
            }
        }
    }
}
