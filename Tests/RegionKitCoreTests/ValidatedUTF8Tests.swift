import Testing
import RegionKitCore

@Suite("String(validatingUTF8:source:)")
struct ValidatedUTF8Tests {
    @Test("Valid text as it is; otherwise the offset of the first byte that is not UTF-8 (a stray byte, a cut or overlong sequence, a surrogate)",
          arguments: [([0x61, 0xFF, 0x62], 1), ([0x61, 0x62, 0xC3], 2), ([0xC3, 0xA9, 0xC0, 0xAF], 2), ([0x61, 0xED, 0xA0, 0x80], 1), ([0xFE], 0)] as [([UInt8], Int)])
    func offsets(bytes: [UInt8], offset: Int) {
        #expect { try String(validatingUTF8: bytes, source: "c.yaml") } throws: {
            ($0 as? RegionKitError)?.message == "c.yaml: not valid UTF-8 at byte \(offset)"
        }
    }

    @Test func validText() throws {
        #expect(try String(validatingUTF8: Array("café ☕︎".utf8), source: "c.yaml") == "café ☕︎")
        #expect(try String(validatingUTF8: [UInt8](), source: "c.yaml") == "")
    }
}
