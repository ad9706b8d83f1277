extension BeaconLayout {
    /// Parses a layout as written on the command line (`scan --layout`, `monitor --layout`) and in
    /// an hci source's `layouts`: the expression, optionally preceded by the format its identities
    /// get and a colon — `ibeacon:`, `altbeacon:` or `eddystone-uid:` (any case). Without one the
    /// format is inferred (see ``format``). Layout terms are one letter before their colon, so
    /// the prefix cannot be mistaken for a term.
    ///
    /// ```swift
    /// try BeaconLayout(tagged: "altbeacon:m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24").format   // .altBeacon
    /// try BeaconLayout(tagged: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24").format             // .iBeacon (inferred)
    /// ```
    ///
    /// `format`, when given (a configuration's `{layout: …, format: …}`), applies as a prefix
    /// does; both may be given only if they agree. Throws `invalidArgument` for an unknown format,
    /// two different ones, a layout error (naming the term), or identifiers that do not have the
    /// format's shape.
    public init(tagged text: String, format given: BeaconFormat? = nil) throws(RegionKitError) {
        let (prefixed, expression) = try Self.splitFormat(text)
        if let given, let prefixed, given != prefixed {
            throw RegionKitError(.invalidArgument, "beacon layout '\(text.prefix(200))': format \(given.name) and the prefix \(prefixed.name) disagree; give one")
        }
        try self.init(expression, format: given ?? prefixed)
    }

    /// `FORMAT:EXPRESSION` → (format, expression); a text that starts with a term has no format.
    static func splitFormat(_ text: String) throws(RegionKitError) -> (BeaconFormat?, String) {
        let trimmed = text.drop { $0 == " " }
        guard let colon = trimmed.firstIndex(of: ":") else { return (nil, text) }
        let name = trimmed[..<colon]
        // A first term (`m:…`, or `x,s:…`) is not a format name.
        guard name.count > 1, !name.contains(",") else { return (nil, text) }
        guard let format = BeaconFormat(name: String(name)) else {
            throw RegionKitError(.invalidArgument, "beacon layout '\(text.prefix(200))': '\(name.prefix(40))' is not a format (ibeacon, altbeacon, eddystone-uid) nor a term (m, s, i, p, d, x)")
        }
        return (format, String(trimmed[trimmed.index(after: colon)...]))
    }
}
