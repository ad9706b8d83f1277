import Testing
import RegionKitCore
@testable import RegionKitGateway

/// The splitter scans in runs (state in locals, fast skips inside and between strings, an object's
/// bytes copied once per chunk). These tests hold it to the plain byte-at-a-time scan it replaced,
/// kept here as ``ByteWiseSplitter``, on generated streams cut into random chunks, and test the
/// size limit, which no other test reaches.
@Suite("ConcatenatedJSONSplitter: the run-wise scan against the byte-wise one")
struct ConcatenatedJSONSplitterTests {
    /// The byte-at-a-time splitter (RegionKit before session 29), the oracle: every byte goes
    /// through the state machine and is appended to the current object one by one.
    struct ByteWiseSplitter {
        var current: [UInt8] = []
        var depth = 0, inString = false, escaped = false, closedString = false, objectStart = 0
        var discarding = false, inGarbage = false
        var offset = 0, skippedBytes = 0, skippedRuns = 0
        var firstSkip: ConcatenatedJSONSplitter.Skip?
        var failure: String?
        let skipsDamage: Bool
        let limit = ConcatenatedJSONSplitter.maximumObjectSize

        /// The objects completed, and the failure message if this feed threw.
        mutating func feed(_ chunk: [UInt8]) -> (objects: [(Int, [UInt8])], thrown: String?) {
            if let failure { return ([], failure) }
            var objects: [(Int, [UInt8])] = []
            func stop(_ reason: String) -> (objects: [(Int, [UInt8])], thrown: String?) {
                failure = "input: " + reason
                return (objects, objects.isEmpty ? failure : nil)
            }
            func skip(at offset: Int, _ reason: String) {
                skippedRuns += 1
                if firstSkip == nil { firstSkip = .init(offset: offset, reason: reason) }
            }
            /// The current object is damage (a quote missing): skipped, the scan between objects.
            func abandon(_ reason: String) {
                if !discarding {
                    skip(at: objectStart, reason)
                    skippedBytes += current.count
                }
                current = []
                discarding = false
                depth = 0
                inString = false
                escaped = false
            }
            var index = 0
            while index < chunk.count {
                let byte = chunk[index]
                if depth > 0 && closedString {
                    // The byte after a string: white space, `:`, `,`, `}` or `]`, or a quote is missing.
                    closedString = false
                    if !" \n\r\t:,}]".utf8.contains(byte) {
                        let reason = "a string is followed by byte 0x\(String(byte, radix: 16)) ('\(ConcatenatedJSONSplitter.printable(byte))') at offset \(offset): the JSON object starting at offset \(objectStart) is damaged (a quote missing?)"
                        guard skipsDamage else { return stop(reason) }
                        abandon(reason)
                        inGarbage = true
                        continue   // the same byte again, between objects
                    }
                }
                index += 1
                defer { offset += 1 }
                if depth == 0 {
                    switch byte {
                    case UInt8(ascii: "{"):
                        depth = 1; objectStart = offset; current = [byte]; inGarbage = false
                    case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ","):
                        if inGarbage { skippedBytes += 1 }
                    default:
                        let reason = "unexpected byte 0x\(String(byte, radix: 16)) ('\(ConcatenatedJSONSplitter.printable(byte))') at offset \(offset) between JSON objects"
                        guard skipsDamage else { return stop(reason) }
                        if !inGarbage { skip(at: offset, reason) }
                        inGarbage = true
                        skippedBytes += 1
                    }
                    continue
                }
                if discarding { skippedBytes += 1 } else { current.append(byte) }
                if inString && byte < 0x20 {
                    let reason = "a control byte 0x\(String(byte, radix: 16)) inside a string at offset \(offset): the JSON object starting at offset \(objectStart) is damaged (a closing quote missing?)"
                    guard skipsDamage else { return stop(reason) }
                    abandon(reason)
                    continue
                }
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false; closedString = true }
                } else {
                    switch byte {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            if !discarding { objects.append((objectStart, current)) }
                            current = []
                            discarding = false
                        }
                    default: break
                    }
                }
                if !discarding && current.count > limit {
                    let reason = "the JSON object starting at offset \(objectStart) is larger than \(limit) bytes"
                    guard skipsDamage else { return stop(reason) }
                    skip(at: objectStart, reason)
                    skippedBytes += current.count
                    current = []
                    discarding = true
                }
            }
            return (objects, nil)
        }
    }

    /// A stream of objects (strings with escapes and braces, nesting, numbers), whitespace,
    /// commas and, now and then, garbage between objects.
    static func stream(_ random: inout SeededRandom, objects: Int) -> [UInt8] {
        let pieces: [String] = [#""a""#, #""b\"}""#, #""\\""#, #""{[""#, "1", "-2.5e3", "true", "null", #""ü""#]
        func value(_ depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 3 ? 1 : 4), using: &random) {
            case 0: return pieces.randomElement(using: &random)!
            case 1: return "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            default: return object(depth + 1)
            }
        }
        func object(_ depth: Int) -> String {
            "{" + (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces[Int.random(in: 0..<3, using: &random)] + ":" + value(depth) }
                .joined(separator: Bool.random(using: &random) ? "," : ",\n  ") + "}"
        }
        var text = ""
        for _ in 0..<objects {
            text += object(0)
            switch Int.random(in: 0..<12, using: &random) {
            case 0: text += "x!"          // garbage
            case 1: text += "\n , \t"
            case 2: text += "]"           // a stray close between objects
            case 3: text += "{\"lost\": \"quote\n, \"x\": {}}"   // a string's closing quote missing: the line break ends the object
            case 4: text += #"{"lost":"quote,"x":{"y":"}"}}"#     // compact: the quote after `quote` closes it, `x` follows
            case 5: text += #"{"lost":"a" "b"}"#                 // white space, then a byte no string is followed by: found later, by the decoder
            default: text += Bool.random(using: &random) ? "\n" : ""
            }
        }
        if Int.random(in: 0..<4, using: &random) == 0 { text += #"{"cut": "#  } // truncated at the end
        return Array(text.utf8)
    }

    /// Feeds `bytes` to both splitters in the same random chunks; they must agree on every feed.
    static func compare(_ bytes: [UInt8], skipsDamage: Bool, random: inout SeededRandom, maximumChunk: Int) {
        var splitter = ConcatenatedJSONSplitter(skipsDamage: skipsDamage)
        var oracle = ByteWiseSplitter(skipsDamage: skipsDamage)
        var index = 0
        while index < bytes.count {
            let end = Swift.min(bytes.count, index + Int.random(in: 1...maximumChunk, using: &random))
            let chunk = Array(bytes[index..<end])
            index = end
            let expected = oracle.feed(chunk)
            var thrown: String?
            var objects: [ConcatenatedJSONSplitter.Object] = []
            do { objects = try splitter.feed(chunk) } catch { thrown = (error as? RegionKitError)?.message ?? "\(error)" }
            #expect(thrown == expected.thrown)
            #expect(objects.map(\.offset) == expected.objects.map(\.0))
            #expect(objects.map(\.bytes) == expected.objects.map(\.1))
            #expect(splitter.offset == oracle.offset)
            #expect(splitter.skippedBytes == oracle.skippedBytes)
            #expect(splitter.skippedRuns == oracle.skippedRuns)
            #expect(splitter.firstSkip == oracle.firstSkip)
            #expect(splitter.failure?.message == oracle.failure)
            if thrown != nil { break }
        }
    }

    @Test("generated streams in random chunks: the same objects, offsets, skips and failures", arguments: [false, true])
    func agreesWithTheByteWiseScan(skipsDamage: Bool) {
        var random = SeededRandom(seed: skipsDamage ? 29 : 2029)
        for round in 0..<300 {
            let bytes = Self.stream(&random, objects: 1 + round % 9)
            Self.compare(bytes, skipsDamage: skipsDamage, random: &random, maximumChunk: round % 3 == 0 ? 4 : 97)
        }
    }

    @Test("objects of the size limit, one byte over and two over, in strings and between them, across chunks",
          arguments: [false, true])
    func theSizeLimit(skipsDamage: Bool) throws {
        let limit = ConcatenatedJSONSplitter.maximumObjectSize
        var random = SeededRandom(seed: 13)
        // {"s":"aaa…"} with the string long enough that the object is `size` bytes: the limit falls
        // inside the string; {"n":[1,1,…]} puts it between array elements.
        func inString(_ size: Int) -> [UInt8] { Array(#"{"s":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: size - 8) + Array(#""}"#.utf8) }
        func inArray(_ size: Int) -> [UInt8] {
            let body = Array(repeating: UInt8(ascii: " "), count: size - 8)
            return Array(#"{"n":["#.utf8) + body + Array("]}".utf8)
        }
        for make in [inString, inArray] {
            for size in [limit, limit + 1, limit + 2, limit + 1000] {
                let small = Array(#"{"k":1}"#.utf8)
                let bytes = small + make(size) + Array("\n".utf8) + small
                #expect(make(size).count == size)
                Self.compare(bytes, skipsDamage: skipsDamage, random: &random, maximumChunk: 300_000)
                Self.compare(bytes, skipsDamage: skipsDamage, random: &random, maximumChunk: bytes.count)
            }
        }
        // What the limit means, spelled out: an object of limit + 1 bytes is still kept (its last
        // byte closes it before the check), one of limit + 2 is skipped whole and counted.
        var splitter = ConcatenatedJSONSplitter(skipsDamage: true)
        let kept = try splitter.feed(inString(limit + 1))
        #expect(kept.count == 1 && kept[0].bytes.count == limit + 1)
        let skipped = try splitter.feed(inString(limit + 2) + Array(#"{"k":1}"#.utf8))
        #expect(skipped.map(\.offset) == [2 * limit + 3])
        #expect(splitter.skippedBytes == limit + 2 && splitter.skippedRuns == 1)
        #expect(splitter.firstSkip?.reason == "the JSON object starting at offset \(limit + 1) is larger than \(limit) bytes")

        // An oversized object whose string then breaks (its line ends in it, the next line an object;
        // a string followed by a letter) is one stretch of damage, not two: one run, its bytes up to
        // the next object (each counted a second run before).
        for broken in [Array("\"a\n".utf8), Array("\"a\"b}".utf8)] {
            let oversized = Array(#"{"s":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: limit) + Array(#"","t":"#.utf8) + broken
            let bytes = oversized + Array(#"{"k":1}"#.utf8)
            Self.compare(bytes, skipsDamage: true, random: &random, maximumChunk: bytes.count)
            var splitter = ConcatenatedJSONSplitter(skipsDamage: true)
            let read = try splitter.feed(bytes)
            #expect(read.map(\.offset) == [oversized.count])
            #expect(splitter.skippedRuns == 1 && splitter.skippedBytes == oversized.count)
        }
    }
}
