import Foundation
import Testing
@testable import RegionKitLocation

/// The XML scanner GPX is read with (instead of FoundationXML): events, references, and a
/// typed error with its byte offset for every way a document can be malformed.
@Suite("XML scanner")
struct XMLScannerTests {
    static func events(_ text: String) throws(XMLScanner.Failure) -> [XMLScanner.Event] {
        var scanner = XMLScanner(Array(text.utf8))
        var events: [XMLScanner.Event] = []
        while let event = try scanner.next() { events.append(event) }
        return events
    }

    static func failure(_ text: String) -> XMLScanner.Failure? {
        do { _ = try events(text); return nil } catch { return error }
    }

    @Test("elements, attributes (both quotes, normalized), text, CDATA, self-closing tags; declaration, comments and PIs skipped")
    func wellFormed() throws {
        let events = try Self.events("""
            \u{FEFF}<?xml version="1.0"?><!-- c --><?pi?><!DOCTYPE gpx>
            <g:gpx a="1" b = 'x\ty'><w lat="&lt;&#65;&#x42;&#9;"/>t&amp;<![CDATA[<raw>&amp;]]><?x data?></g:gpx>
            <!-- after -->
            """)
        // Offsets: BOM 0–2, declaration 3–23, comment 24–33, <?pi?> 34–39, DOCTYPE 40–53, LF 54,
        // <g:gpx …> 55–77, <w …/> 78–107, text 108–113, CDATA 114–135, <?x data?> 136–145, </g:gpx> 146.
        // A literal tab in an attribute value becomes a space; &#9; stays a tab.
        #expect(events == [
            .start(name: "g:gpx", attributes: ["a": "1", "b": "x y"], offset: 55),
            .start(name: "w", attributes: ["lat": "<AB\t"], offset: 78),
            .end(name: "w", offset: 78),
            .text("t&"),
            .text("<raw>&amp;"),
            .end(name: "g:gpx", offset: 146),
        ])
    }

    @Test("the fuzzing find: a processing instruction without data (FoundationXML dereferenced a null pointer) is skipped")
    func processingInstructionWithoutData() throws {
        // Fuzz/Corpus/gpx/crash-7bb3c8eb…: <?ibm912p10019xml?> then a broken <gpx> tag.
        let bytes = Array(#"<?ibm912p10019xml?><gpx versio0" lon="pt lat="6gtx>"#.utf8)
        do {
            _ = try GPXReader.read(data: Data(bytes))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .malformedXML && error.line == 1, "\(error)")
        }
        #expect(try GPXReader.read(#"<?a?><gpx><?b?><wpt lat="1" lon="2"><?c?></wpt></gpx>"#).waypoints.count == 1)
    }

    @Test("malformed: each error names what and where (byte offset)", arguments: [
        ("", "empty document: no root element", 0),
        ("  <!-- only -->", "empty document: no root element", 15),
        ("<a>", "premature end of document: <a> is not closed", 3),
        ("<a></b>", "end tag </b> does not match the start tag <a>", 3),
        ("</a>", "end tag </a> without a start tag", 0),
        ("<a/><b/>", "a second root element", 4),
        ("x<a/>", "text before the root element", 0),
        ("<a/> y", "text after the root element", 5),
        ("<a b=1/>", "the value of the attribute b must be quoted", 5),
        ("<a b='1' b='2'/>", "the attribute b is repeated", 9),
        ("<a b='1'c='2'/>", "space, '>' or '/>' required in the tag <a>", 8),
        ("<a b='<'/>", "'<' in the value of the attribute b", 6),
        ("<a b='1/>", "the value of the attribute b is not closed", 5),
        ("<a b/>", "'=' required after the attribute b", 4),
        ("<1a/>", "invalid element name", 1),
        ("<a>&nbsp;</a>", "undefined entity &nbsp;", 3),
        ("<a>&#0;</a>", "invalid character reference &#0;", 3),
        ("<a>&#xD800;</a>", "invalid character reference &#xD800;", 3),
        ("<a>&#99999999999;</a>", "'&' must start an entity or character reference ending in ';'", 3),
        ("<a>&#x110000;</a>", "invalid character reference &#x110000;", 3),
        ("<a>& b</a>", "'&' must start an entity or character reference ending in ';'", 3),
        ("<a>\u{1}</a>", "invalid character U+0001", 3),
        ("<a><!-- x</a>", "comment not closed (premature end of document)", 3),
        ("<a><![CDATA[x</a>", "CDATA section not closed (premature end of document)", 3),
        ("<![CDATA[x]]><a/>", "CDATA section outside the root element", 0),
        ("<a><?pi x</a>", "processing instruction <?pi not closed (premature end of document)", 3),
        ("<a><?pi/x?></a>", "space required after the processing instruction target pi", 7),
        ("<a/><?xml version='1.0'?>", "the XML declaration is allowed only at the start of the document", 4),
        (#"<!DOCTYPE gpx [<!ENTITY x "y">]><gpx/>"#, "a DOCTYPE with an internal subset (entity declarations) is not supported", 14),
        ("<!DOCTYPE gpx", "DOCTYPE not closed (premature end of document)", 0),
        ("<a/><!DOCTYPE a>", "DOCTYPE after the root element", 4),
        ("<!ELEMENT a><a/>", "unknown markup declaration", 0),
        ("<a", "premature end of document in the tag <a>", 0),
        ("<", "premature end of document (element name expected)", 1),
    ])
    func malformed(text: String, message: String, offset: Int) {
        #expect(Self.failure(text) == XMLScanner.Failure(message: message, offset: offset), "\(text)")
    }

    @Test("position: line from 1, column in scalars from 1; asked out of order too")
    func position() {
        var scanner = XMLScanner(Array("ab\né€x\n\nz".utf8))
        #expect(scanner.position(of: 0) == (1, 1))
        #expect(scanner.position(of: 3) == (2, 1))
        #expect(scanner.position(of: 8) == (2, 3))     // after é (2 bytes) and € (3 bytes)
        #expect(scanner.position(of: 11) == (4, 1))
        #expect(scanner.position(of: 2) == (1, 3))     // backwards: recounted
        #expect(scanner.position(of: 99) == (4, 2))    // clamped to the end
    }

    @Test("deep nesting is not recursion: 100,000 levels")
    func deepNesting() throws {
        let depth = 100_000
        let text = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        #expect(try Self.events(text).count == 2 * depth)
    }

    @Test("GPX encodings: UTF-16 with a BOM, ISO-8859-1 and windows-1252 transcoded; others refused by name")
    func encodings() throws {
        let document = #"<?xml version="1.0" encoding="UTF-16"?><gpx><wpt lat="1" lon="2"><name>é€</name></wpt></gpx>"#
        var utf16 = Data([0xFF, 0xFE])
        for unit in document.utf16 { utf16.append(UInt8(unit & 0xFF)); utf16.append(UInt8(unit >> 8)) }
        #expect(try GPXReader.read(data: utf16).waypoints.first?.name == "é€")
        // windows-1252: 0x80 is €, 0xE9 é.
        let cp1252 = Array(#"<?xml version="1.0" encoding="windows-1252"?><gpx><wpt lat="1" lon="2"><name>"#.utf8) + [0xE9, 0x80] + Array("</name></wpt></gpx>".utf8)
        #expect(try GPXReader.read(data: Data(cp1252)).waypoints.first?.name == "é€")
        do {
            _ = try GPXReader.read(#"<?xml version="1.0" encoding="EBCDIC-US"?><gpx/>"#)
            Issue.record("accepted")
        } catch {
            #expect(error.message == #"encoding "ebcdic-us" is not supported (UTF-8, UTF-16, ISO-8859-1, windows-1252)"#)
        }
    }
}
