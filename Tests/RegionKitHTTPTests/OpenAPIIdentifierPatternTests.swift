import Foundation
import Testing
import RegionKitCore
@testable import RegionKitHTTP

/// The OpenAPI document's pattern for a new region's id says what ``Region/validateNew(identifier:)``
/// checks: a client validating against the document (schemathesis, generated clients) and the
/// daemon agree on every character of the Basic Multilingual Plane, alone, at either end and inside.
@Suite("OpenAPI: the region id pattern and the daemon's check agree")
struct OpenAPIIdentifierPatternTests {
    @Test("Every BMP scalar, alone, first, last and inside: the pattern matches exactly when the daemon accepts")
    func patternMatchesTheCheck() throws {
        let yaml = OpenAPIDocument.yaml(maximumRadius: 1_000)
        // The id parameter's schema: `maxLength: 256, pattern: "…"}` (YAML double-quoted: `\\` is one backslash).
        let marker = try #require(yaml.range(of: #"maxLength: 256, pattern: ""#))
        let end = try #require(yaml[marker.upperBound...].range(of: #""}"#))
        let pattern = yaml[marker.upperBound..<end.lowerBound].replacingOccurrences(of: #"\\"#, with: #"\"#)
        let regex = try NSRegularExpression(pattern: pattern)
        var disagreements: [String] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }   // surrogates
            let c = String(scalar)
            for id in [c, "a" + c, c + "a", "a" + c + "b"] {
                // The pattern ends with (?![\s\S]), the end of the input in ECMA-262, Python and ICU
                // alike (`$` also matched before a final "\n" in Python and ICU: "a\n" passed).
                let matches = regex.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil
                let accepted = (try? Region.validateNew(identifier: id)) != nil
                if matches != accepted {
                    disagreements.append("U+\(String(value, radix: 16, uppercase: true)) in \(id.debugDescription): pattern \(matches), daemon \(accepted)")
                }
            }
            if disagreements.count > 20 { break }
        }
        // The path segments a URL resolves away are refused; longer runs of dots are identifiers.
        for id in [".", "..", "...", ".a", "a.", "..a", "a..", ". .", "./"] {
            let matches = regex.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil
            let accepted = (try? Region.validateNew(identifier: id)) != nil
            if matches != accepted || accepted == [".", ".."].contains(id) {
                disagreements.append("\(id.debugDescription): pattern \(matches), daemon \(accepted)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }
}
