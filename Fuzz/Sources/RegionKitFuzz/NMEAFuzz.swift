import FuzzSupport
import RegionKitLocation

/// NMEA 0183 text (any bytes, any line endings), with and without required checksums. Invariant:
/// reading line by line through ``NMEAReader/consume(line:)`` never reports more fixes than lines.
enum NMEAFuzz {
    static func run(_ data: [UInt8]) {
        var strict = NMEAReader.Configuration()
        strict.requireChecksum = true
        strict.reportUnsupportedSentences = true
        var lenient = NMEAReader.Configuration()
        lenient.requireChecksum = false
        for configuration in [strict, lenient] {
            let result = NMEAReader.read(bytes: data, configuration: configuration)
            let lines = data.split(omittingEmptySubsequences: false) { $0 == 0x0A || $0 == 0x0D }.count
            guard result.fixes.count <= lines else {
                FuzzTarget.fail("\(result.fixes.count) fixes from \(lines) lines")
            }
            for diagnostic in result.diagnostics { _ = diagnostic.description }
        }
    }
}
