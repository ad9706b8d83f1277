import RegionKitCore

/// Splits a byte stream of concatenated JSON objects (`{...}{...}`, pretty-printed or one per
/// line) into one byte slice per top-level object, with the offset where each begins. Braces inside
/// strings and escaped quotes are handled. Fed in arbitrary chunks.
///
/// Strict by default: a byte between objects that is not whitespace or a comma throws, and so do
/// the two marks of a missing quote: a raw control byte (a line break) inside a string, which no
/// JSON string holds, and a string followed by anything but white space, `:`, `,`, `}` or `]`
/// (in compact JSON, `{"a":"x,"b":1}` closes the string early and the rest of the stream would
/// count the other way round). With ``skipsDamage`` they are skipped instead (garbage up to the
/// next `{`; the object with the broken string, the scan going on between objects: after the
/// control byte, or from the byte that followed the string), and so is an object larger than
/// ``maximumObjectSize``; ``skippedBytes`` and ``firstSkip`` say what was left out.
///
/// ```swift
/// var splitter = ConcatenatedJSONSplitter()
/// for object in try splitter.feed(Array(#"{"a":1}{"b":"}"}"#.utf8)) { print(object.offset) } // 0, 7
/// try splitter.finish()
/// ```
public struct ConcatenatedJSONSplitter: Sendable {
    public struct Object: Sendable {
        /// Offset of the opening brace in the whole stream.
        public var offset: Int
        public var bytes: [UInt8]
    }

    /// The first stretch of bytes skipped: where it began and why.
    public struct Skip: Hashable, Sendable {
        public var offset: Int
        public var reason: String
    }

    /// The largest object kept (bytes); larger ones are damage (a sighting is ~200 bytes).
    public static let maximumObjectSize = 1 << 20

    private var current: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// The last byte closed a string: the next one must be white space, `:`, `,`, `}` or `]`.
    private var closedString = false
    private var objectStart = 0
    /// The current object outgrew ``maximumObjectSize``: it is being skipped to its end.
    private var discarding = false
    /// Inside a run of garbage between objects (counts as one skip).
    private var inGarbage = false
    /// Bytes seen so far.
    public private(set) var offset = 0
    /// Name of the stream in error messages.
    public let source: String
    /// Skip damage (garbage between objects, oversized objects) instead of throwing.
    public var skipsDamage = false
    /// Bytes skipped as damage (with ``skipsDamage``).
    public private(set) var skippedBytes = 0
    /// Separate stretches of skipped bytes.
    public private(set) var skippedRuns = 0
    /// The first skipped stretch.
    public private(set) var firstSkip: Skip?
    /// Without ``skipsDamage``: the damage that stopped the stream. A chunk that completed objects
    /// before its damage returns them and the error comes from the next ``feed(_:)`` or
    /// ``finish()``, so no object already read is lost to the chunk size.
    public private(set) var failure: RegionKitError?

    public init(source: String = "input", skipsDamage: Bool = false) {
        self.source = source
        self.skipsDamage = skipsDamage
    }

    /// Feeds a chunk and returns the objects it completed. Without ``skipsDamage``, damage throws,
    /// but only once the objects completed before it have been returned (see ``failure``).
    ///
    /// The scan keeps its state in locals (no closure captures them, so they stay in registers)
    /// and copies an object's bytes in runs, one copy per object and chunk, where the byte-wise
    /// form appended each byte to the object (14 % of an instant replay of a gateway recording).
    public mutating func feed(_ chunk: [UInt8]) throws -> [Object] {
        if let failure { throw failure }
        var objects: [Object] = []
        var depth = depth, inString = inString, escaped = escaped, closedString = closedString
        var discarding = discarding, inGarbage = inGarbage, skippedBytes = skippedBytes
        let base = offset
        // The current object's bytes from earlier chunks are in `current` (`carried` of them);
        // this chunk's begin at `run` (depth > 0, not discarding). `current` is empty between objects.
        var carried = current.count
        var run = 0
        // Without skipsDamage: what stopped the scan (after the byte before `index`).
        var damage: String?
        var index = 0
        let count = chunk.count
        scan: while index < count {
            if depth > 0 && !escaped && !closedString {
                // Skip a stretch that changes nothing but the size: inside a string, up to a quote
                // or a backslash; outside, up to a quote, brace or bracket. Not past the byte that
                // would make the object too large (checked below, byte by byte).
                let end = discarding ? count : Swift.min(count, run + (Self.maximumObjectSize - carried))
                let start = index
                if inString {
                    while index < end, chunk[index] != UInt8(ascii: "\""), chunk[index] != UInt8(ascii: "\\"), chunk[index] >= 0x20 { index += 1 }
                } else {
                    while index < end, !Self.isStructural(chunk[index]) { index += 1 }
                }
                if discarding { skippedBytes += index - start }
                guard index < count else { break }
            }
            let byte = chunk[index]
            index += 1
            if depth == 0 {
                switch byte {
                case UInt8(ascii: "{"):
                    depth = 1
                    objectStart = base + index - 1
                    run = index - 1
                    inGarbage = false
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: ","):
                    if inGarbage { skippedBytes += 1 }
                default:
                    let reason = "unexpected byte 0x\(String(byte, radix: 16)) ('\(Self.printable(byte))') at offset \(base + index - 1) between JSON objects"
                    guard skipsDamage else {
                        damage = reason
                        break scan
                    }
                    if !inGarbage { noteSkip(at: base + index - 1, reason: reason) }
                    inGarbage = true
                    skippedBytes += 1
                }
                continue
            }
            // A quote missing turns the strings inside out from there on, and every brace after it
            // would count the wrong way to the end of the stream (one deleted quote lost the rest
            // of a recording as one oversized object). Two marks of it: no JSON string holds a raw
            // control byte (a line break), and none is followed by anything but white space, `:`,
            // `,`, `}` or `]` (compact JSON has no line breaks to catch it). The object is damage;
            // the scan starts again between objects: after the control byte (white space there),
            // from the byte that followed the string (garbage up to the next `{`).
            var broken: String?
            var resumeAtByte = false
            if closedString {
                closedString = false
                if !Self.canFollowString(byte) {
                    broken = "a string is followed by byte 0x\(String(byte, radix: 16)) ('\(Self.printable(byte))') at offset \(base + index - 1): the JSON object starting at offset \(objectStart) is damaged (a quote missing?)"
                    resumeAtByte = true
                }
            }
            if discarding && !resumeAtByte { skippedBytes += 1 }
            if inString && byte < 0x20 {
                broken = "a control byte 0x\(String(byte, radix: 16)) inside a string at offset \(base + index - 1): the JSON object starting at offset \(objectStart) is damaged (a closing quote missing?)"
            }
            if let broken {
                // The byte that followed a string is read again, between objects.
                if resumeAtByte { index -= 1 }
                guard skipsDamage else {
                    damage = broken
                    break scan
                }
                // An object already skipped as oversized is one stretch of damage with this.
                if !discarding {
                    noteSkip(at: objectStart, reason: broken)
                    skippedBytes += carried + (index - run)
                }
                current = []
                carried = 0
                discarding = false
                depth = 0
                inString = false
                escaped = false
                // The bytes from the one that followed the string to the next `{` are this damage's.
                inGarbage = resumeAtByte
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
                        if !discarding {
                            if carried == 0 {
                                objects.append(Object(offset: objectStart, bytes: Array(chunk[run..<index])))
                            } else {
                                current.append(contentsOf: chunk[run..<index])
                                objects.append(Object(offset: objectStart, bytes: current))
                            }
                        }
                        current = []
                        carried = 0
                        discarding = false
                    }
                default: break
                }
            }
            // The object so far (the carried bytes and this chunk's run) outgrew the limit.
            if depth > 0 && !discarding && carried + (index - run) > Self.maximumObjectSize {
                let reason = "the JSON object starting at offset \(objectStart) is larger than \(Self.maximumObjectSize) bytes"
                guard skipsDamage else {
                    damage = reason
                    break scan
                }
                noteSkip(at: objectStart, reason: reason)
                skippedBytes += carried + (index - run)
                current = []
                carried = 0
                discarding = true
            }
        }
        if damage == nil && depth > 0 && !discarding { current.append(contentsOf: chunk[run..<count]) }
        self.depth = depth
        self.inString = inString
        self.escaped = escaped
        self.closedString = closedString
        self.discarding = discarding
        self.inGarbage = inGarbage
        self.skippedBytes = skippedBytes
        offset = base + index
        if let damage {
            let error = RegionKitError(.malformedInput, "\(source): \(damage)")
            failure = error
            if objects.isEmpty { throw error }
        }
        return objects
    }

    private mutating func noteSkip(at offset: Int, reason: String) {
        skippedRuns += 1
        if firstSkip == nil { firstSkip = Skip(offset: offset, reason: reason) }
    }

    /// Checks that the stream did not end inside an object.
    public func finish() throws {
        if let failure { throw failure }
        if depth > 0 {
            throw RegionKitError(.malformedInput, "\(source): truncated: the JSON object starting at offset \(objectStart) is not closed at the end of the data (offset \(offset))")
        }
    }

    /// What JSON allows after a string: white space, `:`, `,`, `}` or `]`.
    @inline(__always)
    static func canFollowString(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"),
             UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): true
        default: false
        }
    }

    /// A quote, brace or bracket: the bytes that change the scan's state outside a string.
    @inline(__always)
    static func isStructural(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte | 0x20 == UInt8(ascii: "{") || byte | 0x20 == UInt8(ascii: "}")
    }

    static func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "?"
    }
}
