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

    /// One piece of a scanned document, without offsets. (Structured, not a marker character
    /// glued to the text: a text starting with a combining mark, U+031A, merged with such a
    /// marker into one `Character`, and `dropFirst()` then lost the mark — a harness bug the
    /// campaign of session 7 found.)
    /// Compared scalar for scalar (`String`'s `==` is canonical equivalence, which would hide a
    /// scanner that normalised text).
    enum Item: Equatable {
        case start(String, [Attribute])
        case end(String)
        case text(String)

        static func == (a: Item, b: Item) -> Bool {
            switch (a, b) {
            case (.start(let x, let p), .start(let y, let q)): Array(x.utf8) == Array(y.utf8) && p == q
            case (.end(let x), .end(let y)), (.text(let x), .text(let y)): Array(x.utf8) == Array(y.utf8)
            default: false
            }
        }
    }

    struct Attribute: Equatable {
        var name: String
        var value: String

        static func == (a: Attribute, b: Attribute) -> Bool {
            Array(a.name.utf8) == Array(b.name.utf8) && Array(a.value.utf8) == Array(b.value.utf8)
        }
    }

    /// Elements, attributes (sorted by name) and text (adjacent pieces joined).
    static func content(_ bytes: [UInt8]) -> [Item]? {
        var scanner = XMLScanner(bytes)
        var out: [Item] = []
        var text: String?
        do {
            while let event = try scanner.next() {
                switch event {
                case .text(let piece):
                    text = (text ?? "") + piece
                    continue
                case .start(let name, let attributes, _):
                    if let t = text { out.append(.text(t)) }
                    out.append(.start(name, attributes.map { Attribute(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }))
                case .end(let name, _):
                    if let t = text { out.append(.text(t)) }
                    out.append(.end(name))
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
            switch item {
            case .start(let name, let attributes):
                written += "<" + name
                for attribute in attributes { written += " \(attribute.name)=\"\(escaped(attribute.value, attribute: true))\"" }
                written += ">"
            case .end(let name): written += "</\(name)>"
            case .text(let text): written += escaped(text, attribute: false)
            }
        }
        guard let second = content(Array(written.utf8)) else { FuzzTarget.fail("the scanner refused its own output: \(written)") }
        guard second == first else { FuzzTarget.fail("scanned differently after writing back: \(first) vs \(second)") }
    }
}
