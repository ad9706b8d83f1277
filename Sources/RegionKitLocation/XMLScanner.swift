/// A small, strict pull scanner for the XML that location files (GPX) are written in: elements,
/// attributes, text, CDATA, comments, processing instructions and the XML declaration, over
/// UTF-8 bytes that are already known to be valid UTF-8.
///
/// RegionKit reads GPX with this instead of FoundationXML: libxml2 through FoundationXML trapped
/// on invalid UTF-8 in names and dereferenced a null pointer for a processing instruction without
/// data (`<?target?>`, a fuzzing find). This scanner has no recursion, no entity declarations
/// (a `DOCTYPE` with an internal subset is refused, so no entity expansion at all), bounded
/// character references, and reports every error with the byte offset it happened at
/// (``position(of:)`` turns that into a line and column).
///
/// ```swift
/// var scanner = XMLScanner(Array(#"<gpx><wpt lat="1" lon="2"/></gpx>"#.utf8))
/// while let event = try scanner.next() {
///     print(event)   // start gpx, start wpt [lat, lon], end wpt, end gpx
/// }
/// ```
struct XMLScanner {
    /// What the scanner found next.
    enum Event: Equatable {
        /// A start tag (a self-closing one is followed by its ``end(name:offset:)``); `offset` is its `<`.
        case start(name: String, attributes: [String: String], offset: Int)
        /// An end tag, or the end of a self-closing tag.
        case end(name: String, offset: Int)
        /// Character data inside an element (entities decoded, CDATA as is), in one or more pieces.
        case text(String)
    }

    /// A well-formedness error at a byte offset.
    struct Failure: Error, Equatable {
        var message: String
        var offset: Int
    }

    private let bytes: [UInt8]
    private var index: Int
    private var open: [String] = []
    private var sawRoot = false
    private var pendingEnd: (name: String, offset: Int)?
    /// Incremental line counting for ``position(of:)`` (offsets are asked for in increasing order).
    private var countedTo = 0
    private var countedLine = 1
    private var countedLineStart = 0

    /// `bytes` must be valid UTF-8 (a leading byte-order mark is skipped).
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    /// The next event, `nil` at the end of a well-formed document.
    mutating func next() throws(Failure) -> Event? {
        if let pending = pendingEnd {
            pendingEnd = nil
            return .end(name: pending.name, offset: pending.offset)
        }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                let start = index
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                index = end
                if open.isEmpty {
                    guard bytes[start..<end].allSatisfy(Self.isSpace) else {
                        throw Failure(message: sawRoot ? "text after the root element" : "text before the root element",
                                      offset: start + (bytes[start..<end].firstIndex { !Self.isSpace($0) }.map { $0 - start } ?? 0))
                    }
                    continue
                }
                return .text(try decode(start..<end))
            }
            if starts(with: "<?") {
                try skipProcessingInstruction()
            } else if starts(with: "<!--") {
                guard let end = find("-->", from: index + 4) else { throw Failure(message: "comment not closed (premature end of document)", offset: index) }
                index = end + 3
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw Failure(message: "CDATA section outside the root element", offset: index) }
                guard let end = find("]]>", from: index + 9) else { throw Failure(message: "CDATA section not closed (premature end of document)", offset: index) }
                let text = String(decoding: bytes[(index + 9)..<end], as: UTF8.self)
                index = end + 3
                return .text(text)
            } else if starts(with: "<!DOCTYPE") {
                try skipDoctype()
            } else if starts(with: "<!") {
                throw Failure(message: "unknown markup declaration", offset: index)
            } else if starts(with: "</") {
                return try endTag()
            } else {
                return try startTag()
            }
        }
        if let last = open.last { throw Failure(message: "premature end of document: <\(last)> is not closed", offset: bytes.count) }
        if !sawRoot { throw Failure(message: "empty document: no root element", offset: bytes.count) }
        return nil
    }

    /// Line (from 1) of a byte offset: counted on from the last offset asked for, so a scan that
    /// asks in increasing order reads every byte once. (The column is not counted here: counted
    /// from the line's start for every tag, a document on one line took time quadratic in its
    /// length — 20,000 track points on one line ran for minutes.)
    mutating func line(of offset: Int) -> Int {
        let offset = min(max(offset, 0), bytes.count)
        if offset < countedTo {
            countedTo = 0
            countedLine = 1
            countedLineStart = 0
        }
        for i in countedTo..<offset where bytes[i] == 0x0A {
            countedLine += 1
            countedLineStart = i + 1
        }
        countedTo = offset
        return countedLine
    }

    /// Line (from 1) and column (from 1, in Unicode scalars) of a byte offset, for an error: the
    /// column costs a read of the line up to the offset.
    mutating func position(of offset: Int) -> (line: Int, column: Int) {
        let line = line(of: offset)
        let column = bytes[countedLineStart..<countedTo].reduce(1) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        return (line, column)
    }

    // MARK: - Markup

    private mutating func startTag() throws(Failure) -> Event {
        let tagStart = index
        if sawRoot && open.isEmpty { throw Failure(message: "a second root element", offset: tagStart) }
        index += 1
        let name = try readName(what: "element name")
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = skipSpaces()
            guard index < bytes.count else { throw Failure(message: "premature end of document in the tag <\(name)>", offset: tagStart) }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                open.append(name)
                sawRoot = true
                return .start(name: name, attributes: attributes, offset: tagStart)
            }
            if starts(with: "/>") {
                index += 2
                sawRoot = true
                pendingEnd = (name, tagStart)
                return .start(name: name, attributes: attributes, offset: tagStart)
            }
            guard hadSpace else { throw Failure(message: "space, '>' or '/>' required in the tag <\(name)>", offset: index) }
            let attributeStart = index
            let attribute = try readName(what: "attribute name")
            skipSpaces()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw Failure(message: "'=' required after the attribute \(attribute)", offset: index)
            }
            index += 1
            skipSpaces()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw Failure(message: "the value of the attribute \(attribute) must be quoted", offset: index)
            }
            let quote = bytes[index]
            guard let close = bytes[(index + 1)...].firstIndex(of: quote) else {
                throw Failure(message: "the value of the attribute \(attribute) is not closed", offset: index)
            }
            if let lt = bytes[(index + 1)..<close].firstIndex(of: UInt8(ascii: "<")) {
                throw Failure(message: "'<' in the value of the attribute \(attribute)", offset: lt)
            }
            let value = try decode((index + 1)..<close, normalizingWhitespace: true)
            index = close + 1
            guard attributes.updateValue(value, forKey: attribute) == nil else {
                throw Failure(message: "the attribute \(attribute) is repeated", offset: attributeStart)
            }
        }
    }

    private mutating func endTag() throws(Failure) -> Event {
        let tagStart = index
        index += 2
        let name = try readName(what: "element name")
        skipSpaces()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw Failure(message: "'>' required to end </\(name)>", offset: index)
        }
        index += 1
        guard let last = open.last else { throw Failure(message: "end tag </\(name)> without a start tag", offset: tagStart) }
        guard last == name else { throw Failure(message: "end tag </\(name)> does not match the start tag <\(last)>", offset: tagStart) }
        open.removeLast()
        return .end(name: name, offset: tagStart)
    }

    private mutating func skipProcessingInstruction() throws(Failure) {
        let start = index
        index += 2
        let target = try readName(what: "processing instruction target")
        guard let end = find("?>", from: index) else {
            throw Failure(message: "processing instruction <?\(target) not closed (premature end of document)", offset: start)
        }
        guard end == index || Self.isSpace(bytes[index]) else {
            throw Failure(message: "space required after the processing instruction target \(target)", offset: index)
        }
        if target.lowercased() == "xml", start != (bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0) {
            throw Failure(message: "the XML declaration is allowed only at the start of the document", offset: start)
        }
        index = end + 2
    }

    /// `<!DOCTYPE name …>` without an internal subset is skipped; one with `[ … ]` (entity
    /// declarations) is refused: GPX has no use for it and it is how entity bombs arrive.
    private mutating func skipDoctype() throws(Failure) {
        let start = index
        if sawRoot { throw Failure(message: "DOCTYPE after the root element", offset: start) }
        var quote: UInt8?
        var i = index + 9
        while i < bytes.count {
            let byte = bytes[i]
            if let q = quote {
                if byte == q { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                throw Failure(message: "a DOCTYPE with an internal subset (entity declarations) is not supported", offset: i)
            } else if byte == UInt8(ascii: ">") {
                index = i + 1
                return
            }
            i += 1
        }
        throw Failure(message: "DOCTYPE not closed (premature end of document)", offset: start)
    }

    // MARK: - Pieces

    /// An XML name: a letter, `_`, `:` or any non-ASCII scalar, then those, digits, `-` and `.`.
    private mutating func readName(what: String) throws(Failure) -> String {
        let start = index
        guard index < bytes.count, Self.isNameStart(bytes[index]) else {
            throw Failure(message: index < bytes.count ? "invalid \(what)" : "premature end of document (\(what) expected)", offset: index)
        }
        index += 1
        while index < bytes.count, Self.isNameStart(bytes[index]) || Self.isDigit(bytes[index])
                || bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: ".") {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Character data with its references decoded: the five predefined entities and `&#N;`/`&#xH;`
    /// (at most 8 digits; a valid XML character). Raw control characters are refused. In attribute
    /// values (`normalizingWhitespace`, XML 1.0 §3.3.3) a literal tab, CR or LF becomes a space;
    /// one written as a character reference stays.
    private func decode(_ range: Range<Int>, normalizingWhitespace: Bool = false) throws(Failure) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let byte = bytes[i]
            if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D {
                throw Failure(message: "invalid character U+\(String(byte, radix: 16, uppercase: true).leftPadded(to: 4))", offset: i)
            }
            guard byte == UInt8(ascii: "&") else {
                out.append(normalizingWhitespace && (byte == 0x09 || byte == 0x0A || byte == 0x0D) ? 0x20 : byte)
                i += 1
                continue
            }
            guard let semicolon = bytes[i..<min(range.upperBound, i + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                throw Failure(message: "'&' must start an entity or character reference ending in ';'", offset: i)
            }
            let reference = String(decoding: bytes[(i + 1)..<semicolon], as: UTF8.self)
            switch reference {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                guard reference.hasPrefix("#") else { throw Failure(message: "undefined entity &\(reference);", offset: i) }
                let hex = reference.hasPrefix("#x")
                let digits = reference.dropFirst(hex ? 2 : 1)
                guard !digits.isEmpty, digits.count <= 8, let value = UInt32(digits, radix: hex ? 16 : 10),
                      let scalar = Unicode.Scalar(value), Self.isXMLCharacter(value) else {
                    throw Failure(message: "invalid character reference &\(reference);", offset: i)
                }
                out += Array(String(Character(scalar)).utf8)
            }
            i = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    @discardableResult
    private mutating func skipSpaces() -> Bool {
        let start = index
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
        return index > start
    }

    private func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { literal in bytes[index..<(index + count)].elementsEqual(literal) }
    }

    private func find(_ literal: StaticString, from start: Int) -> Int? {
        let count = literal.utf8CodeUnitCount
        return literal.withUTF8Buffer { literal -> Int? in
            var i = start
            while i + count <= bytes.count {
                if bytes[i] == literal[0], bytes[i..<(i + count)].elementsEqual(literal) { return i }
                i += 1
            }
            return nil
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ":") || byte >= 0x80
    }
    /// XML 1.0 `Char`: tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF.
    private static func isXMLCharacter(_ value: UInt32) -> Bool {
        value == 0x09 || value == 0x0A || value == 0x0D || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
