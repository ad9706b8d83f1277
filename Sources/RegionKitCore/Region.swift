import Foundation

/// A monitored region of either kind.
///
/// ```swift
/// let region = Region.beacon(try BeaconRegion(identifier: "lobby", uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
/// region.identifier // "lobby"
/// region.kind       // .beacon
/// ```
public enum Region: Hashable, Sendable, Codable {
    case beacon(BeaconRegion)
    case circular(CircularRegion)

    public var identifier: String {
        switch self {
        case .beacon(let region): region.identifier
        case .circular(let region): region.identifier
        }
    }

    public var kind: RegionKind {
        switch self {
        case .beacon: .beacon
        case .circular: .circular
        }
    }

    public var notifyOnEntry: Bool {
        switch self {
        case .beacon(let region): region.notifyOnEntry
        case .circular(let region): region.notifyOnEntry
        }
    }

    public var notifyOnExit: Bool {
        switch self {
        case .beacon(let region): region.notifyOnExit
        case .circular(let region): region.notifyOnExit
        }
    }

    public var beaconRegion: BeaconRegion? {
        if case .beacon(let region) = self { return region }
        return nil
    }

    public var circularRegion: CircularRegion? {
        if case .circular(let region) = self { return region }
        return nil
    }

    /// The longest identifier a new region may have, in Unicode scalars (characters as JSON
    /// Schema's `maxLength` counts them, so the API's document can say it).
    public static let maximumIdentifierLength = 256

    /// What the identifier of a region *added* through the configuration or the HTTP API must
    /// also be, beyond `validate(identifier:)`: at most ``maximumIdentifierLength`` characters, with no
    /// control character (a newline in an identifier forged lines in the daemon's log, and went
    /// into hooks' environment) and no bidirectional override or isolate (U+202A–U+202E,
    /// U+2066–U+2069: text that reads differently from what it is), and no white space or
    /// invisible character (U+FEFF, U+200B, U+2060, a soft hyphen) at its start or end: `lobby `
    /// and `lobby` look alike and were two regions, and an identifier of spaces only named
    /// nothing one could read; not `.` or `..` (path segments a URL resolves away). The length
    /// is that of the NFC form, as regions keep it. Regions stored before are not
    /// checked again: they stay readable, removable and monitored.
    ///
    /// ```swift
    /// try Region.validateNew(identifier: "lobby")        // fine
    /// try Region.validateNew(identifier: "Room 204")     // fine: space inside
    /// try Region.validateNew(identifier: "a\nb")         // throws invalidRegion, naming the character
    /// try Region.validateNew(identifier: "lobby ")       // throws invalidRegion: white space at its end
    /// ```
    public static func validateNew(identifier: String) throws {
        try validate(identifier: identifier)
        // Counted as kept (NFC, ``canonical(identifier:)``), which can be longer (U+0958 is two
        // scalars in NFC, U+1D160 three): 200 U+0958 made a region whose reported identifier of
        // 400 could not be sent back.
        let count = identifier.unicodeScalars.count, kept = canonical(identifier: identifier).unicodeScalars.count
        guard kept <= maximumIdentifierLength else {
            // (Not `==` on the strings: Swift compares them up to canonical equivalence.)
            let form = kept == count ? "" : " in its NFC form, as regions keep it"
            throw RegionKitError(.invalidRegion, "a region identifier must be at most \(maximumIdentifierLength) characters (this one has \(kept)\(form))")
        }
        // A URL path takes them for directories: /v1/regions/. is /v1/regions/ in browsers, curl
        // and most HTTP clients, so such a region could not be read, edited or deleted by its path.
        guard identifier != ".", identifier != ".." else {
            throw RegionKitError(.invalidRegion, "a region identifier must not be '\(identifier)': a URL path reads it as a directory")
        }
        for (offset, scalar) in identifier.unicodeScalars.enumerated() {
            let bidi = (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            guard scalar.properties.generalCategory != .control, !bidi else {
                let code = String(scalar.value, radix: 16, uppercase: true)
                throw RegionKitError(.invalidRegion, """
                    a region identifier must not contain \(bidi ? "a bidirectional control" : "a control character") \
                    (U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code) at character \(offset))
                    """)
            }
        }
        func blank(_ scalar: Unicode.Scalar?) -> Bool {
            guard let value = scalar?.value else { return false }
            return Self.invisibleAtAnEnd.contains { $0.contains(value) }
        }
        if blank(identifier.unicodeScalars.first) || blank(identifier.unicodeScalars.last) {
            let scalars = identifier.unicodeScalars
            guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else {
                throw RegionKitError(.invalidRegion, "a region identifier must not be white space or invisible characters only")
            }
            let trimmed = String(scalars[first...last])
            throw RegionKitError(.invalidRegion, """
                a region identifier must not \(blank(scalars.first) ? "begin" : "end") with white space or an invisible character: \
                '\(identifier.prefix(80))' looks like '\(trimmed.prefix(80))' and would be another region
                """)
        }
    }

    /// What a new region's identifier may not begin or end with: Unicode's White_Space, and the
    /// default-ignorable code points of the Basic Multilingual Plane, which are drawn as nothing
    /// (U+00AD soft hyphen, U+200B–U+200F, U+2060–U+206F, U+FEFF, U+FFF0–U+FFF8, …), but not the
    /// variation selectors that end an emoji ("coffee ☕️" ends with U+FE0F). The few outside the
    /// BMP (musical formatting U+1D173–U+1D17A, shorthand format controls, tags) are not listed.
    /// An explicit list, so that the OpenAPI document's pattern for the id says exactly the same.
    static let invisibleAtAnEnd: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0x85...0x85, 0xA0...0xA0, 0xAD...0xAD, 0x34F...0x34F, 0x61C...0x61C,
        0x115F...0x1160, 0x1680...0x1680, 0x17B4...0x17B5, 0x180E...0x180E, 0x2000...0x200F, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x206F, 0x3000...0x3000, 0x3164...0x3164, 0xFEFF...0xFEFF, 0xFFA0...0xFFA0, 0xFFF0...0xFFF8,
    ]

    /// The form a region keeps its identifier in: Unicode Normalization Form C. Swift compares
    /// canonically equivalent text as equal (`"café"` with U+00E9 and with `e` + U+0301), the stores
    /// compare bytes: the same region put in both spellings was one region in the daemon and two
    /// rows in the store (one of them came back after a deletion and a restart). The regions'
    /// initializers keep it so, and the stores look identifiers up in this form.
    ///
    /// ```swift
    /// Region.canonical(identifier: "cafe\u{301}") == "caf\u{E9}"   // one spelling, NFC
    /// Region.canonical(identifier: "lobby")                          // ASCII: unchanged, not copied
    /// ```
    public static func canonical(identifier: String) -> String {
        identifier.utf8.allSatisfy { $0 < 0x80 } ? identifier : identifier.precomposedStringWithCanonicalMapping
    }

    /// `identifiers` as the stores keep them (``canonical(identifier:)``), each once, in their
    /// order: the keys of a read by key.
    ///
    /// ```swift
    /// Region.canonical(identifiers: ["cafe\u{301}", "caf\u{E9}", "lobby"])   // ["caf\u{E9}", "lobby"]
    /// ```
    public static func canonical(identifiers: [String]) -> [String] {
        var seen = Set<String>()
        return identifiers.map(canonical(identifier:)).filter { seen.insert($0).inserted }
    }

    /// A region identifier is not empty and holds no U+0000: the stores keep text as C strings
    /// (SQLite through GRDB ends it at the first NUL — `a\0b` would be stored as, and overwrite,
    /// region `a` — and PostgreSQL refuses it).
    static func validate(identifier: String) throws {
        guard !identifier.isEmpty else {
            throw RegionKitError(.invalidRegion, "a region identifier must not be empty")
        }
        guard !identifier.utf8.contains(0) else {
            throw RegionKitError(.invalidRegion, "a region identifier must not contain U+0000 (NUL)")
        }
    }
}
