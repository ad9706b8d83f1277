import Testing
import RegionKitCore

/// The one rule for scanner (room) names coming in over MQTT, `scan --scanner` and the configuration.
@Suite("Scanner names: 1–128 bytes, no control character, no noncharacter")
struct ScannerNameTests {
    /// `prefix`, the scalar `code`, `suffix` (Swift's literals refuse noncharacters).
    static func with(_ prefix: String, _ code: UInt32, _ suffix: String = "") -> String {
        prefix + String(Unicode.Scalar(code)!) + suffix
    }

    @Test("Names people give rooms are fine, whatever their script; 128 bytes is the limit")
    func accepted() {
        for name in ["kitchen", "Living Room", "Küche", "キッチン", "☕️ corner", "a", String(repeating: "é", count: 64), "bad\u{200F}rlm", "nbsp\u{A0}"] {
            #expect(ScannerName.problem(name) == nil, "\(name)")
        }
    }

    @Test("Refused, saying why and where: empty, too long, a control character (C0, DEL, C1), a noncharacter in any plane")
    func refused() {
        #expect(ScannerName.problem("") == "is empty (1–128 bytes)")
        #expect(ScannerName.problem(String(repeating: "é", count: 65)) == "is 130 bytes long (1–128)")
        #expect(ScannerName.problem("x\n2026-12-04 critical FORGED") == "contains the control character U+000A at character 1")
        #expect(ScannerName.problem("ev\u{0}il") == "contains the control character U+0000 at character 2")
        #expect(ScannerName.problem("a\u{7F}") == "contains the control character U+007F at character 1")
        #expect(ScannerName.problem("a\u{85}") == "contains the control character U+0085 at character 1")
        #expect(ScannerName.problem(Self.with("bad", 0xFDD0, "room")) == "contains the Unicode noncharacter U+FDD0 at character 3")
        for code: UInt32 in [0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF] {
            #expect(ScannerName.problem(Self.with("r", code))?.hasPrefix("contains the Unicode noncharacter U+") == true, "\(code)")
        }
    }
}
