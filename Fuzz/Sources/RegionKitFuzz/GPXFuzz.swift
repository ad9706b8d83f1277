import FuzzSupport
import Foundation
import RegionKitCore
@testable import RegionKitLocation

/// GPX documents (raw bytes, so invalid UTF-8 reaches the XML parser), then the points to fixes
/// with each timing rule. And the XML scanner on its own: a document it accepts, written back out
/// from its events (escaped), scans to the same elements, attributes and text.
enum GPXFuzz {
    static func run(_ data: [UInt8]) {
        scannerRoundTrip(data)
        guard let document = try? GPXReader.read(data: Data(data)) else { return }
        let points = document.waypoints + document.routes.flatMap(\.points) + document.tracks.flatMap(\.points)
        for timing in [GPXReader.Timing.recorded, .constantSpeed(metresPerSecond: 1.4, start: .zero),
                       .automatic(speed: 1.4, start: Timestamp(seconds: 1_700_000_000))] {
            let timed = GPXReader.fixes(points, timing: timing)
            guard timed.fixes.count <= points.count else { FuzzTarget.fail("\(timed.fixes.count) fixes from \(points.count) points") }
        }
    }

    /// Elements, attributes and text (adjacent pieces joined), without offsets.
    static func content(_ bytes: [UInt8]) -> [String]? {
        var scanner = XMLScanner(bytes)
        var out: [String] = []
        var text: String?
        do {
            while let event = try scanner.next() {
                switch event {
                case .text(let piece):
                    text = (text ?? "") + piece
                    continue
                case .start(let name, let attributes, _):
                    if let t = text { out.append("T" + t) }
                    out.append("S" + name + attributes.sorted { $0.key < $1.key }.map { "\u{0}\($0.key)=\($0.value)" }.joined())
                case .end(let name, _):
                    if let t = text { out.append("T" + t) }
                    out.append("E" + name)
                }
                text = nil
            }
        } catch {
            return nil
        }
        return out
    }

    static func scannerRoundTrip(_ data: [UInt8]) {
        guard let bytes = try? GPXReader.utf8(Data(data)), let first = content(bytes) else { return }
        var written = ""
        func escaped(_ text: String, attribute: Bool) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"" where attribute: out += "&quot;"
                case "\t" where attribute: out += "&#9;"
                case "\n" where attribute: out += "&#10;"
                case "\r": out += "&#13;"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        for item in first {
            let body = String(item.dropFirst())
            switch item.first {
            case "S":
                let parts = body.split(separator: "\u{0}", omittingEmptySubsequences: false)
                written += "<" + parts[0]
                for attribute in parts.dropFirst() {
                    let pair = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    written += " \(pair[0])=\"\(escaped(String(pair[1]), attribute: true))\""
                }
                written += ">"
            case "E": written += "</\(body)>"
            default: written += escaped(body, attribute: false)
            }
        }
        guard let second = content(Array(written.utf8)) else { FuzzTarget.fail("the scanner refused its own output: \(written)") }
        guard second == first else { FuzzTarget.fail("scanned differently after writing back: \(first) vs \(second)") }
    }
}
