import Testing
@testable import RegionKitCore

/// FNV-1a against the published test vectors (Fowler, Noll and Vo's reference results), and
/// hashing in pieces equal to hashing at once.
@Suite("FNV-1a")
struct FNV1aTests {
    @Test("32 and 64 bits: the empty input, \"a\" and \"foobar\"; continuing from a hash equals one pass")
    func vectors() {
        #expect(FNV1a.hash32([UInt8]()) == 0x811C_9DC5)
        #expect(FNV1a.hash32("a".utf8) == 0xE40C_292C)
        #expect(FNV1a.hash32("foobar".utf8) == 0xBF9C_F968)
        #expect(FNV1a.hash64([UInt8]()) == 0xCBF2_9CE4_8422_2325)
        #expect(FNV1a.hash64("a".utf8) == 0xAF63_DC4C_8601_EC8C)
        #expect(FNV1a.hash64("foobar".utf8) == 0x8594_4171_F739_67E8)
        #expect(FNV1a.hash32("bar".utf8, from: FNV1a.hash32("foo".utf8)) == FNV1a.hash32("foobar".utf8))
        #expect(FNV1a.hash64("bar".utf8, from: FNV1a.hash64("foo".utf8)) == FNV1a.hash64("foobar".utf8))
    }
}
