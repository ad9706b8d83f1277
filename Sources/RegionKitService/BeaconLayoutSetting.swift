import RegionKitCore

/// One entry of an hci source's `layouts`: a beacon layout in the Android Beacon Library's syntax and,
/// optionally, the format its identities get (so regions of that format match them). Written as a
/// string, optionally `FORMAT:`-prefixed as on the command line, or as a map:
///
/// ```yaml
/// layouts:
///   - "m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"                  # format inferred (here altbeacon)
///   - "ibeacon:m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"          # format given
///   - {layout: "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", format: altbeacon}
/// ```
///
/// Without a format one is inferred (`BeaconLayout.format`: 16+2+2 identifiers after `02 15` are
/// iBeacon, other 16+2+2 AltBeacon, 10+6 Eddystone-UID). A format given in the map and in a prefix
/// must agree.
public struct BeaconLayoutSetting: Hashable, Sendable, Codable, ExpressibleByStringLiteral {
    /// The layout expression, possibly `FORMAT:`-prefixed.
    public var layout: String
    /// The format given in the map form.
    public var format: BeaconFormat?

    public init(layout: String, format: BeaconFormat? = nil) {
        self.layout = layout
        self.format = format
    }

    public init(stringLiteral value: String) {
        self.init(layout: value)
    }

    enum CodingKeys: String, CodingKey {
        case layout, format
    }

    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(layout: text)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(layout: try container.decode(String.self, forKey: .layout),
                  format: try container.decodeIfPresent(BeaconFormat.self, forKey: .format))
    }

    public func encode(to encoder: any Encoder) throws {
        if let format {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(layout, forKey: .layout)
            try container.encode(format, forKey: .format)
        } else {
            var container = encoder.singleValueContainer()
            try container.encode(layout)
        }
    }

    /// The parsed layout; throws `invalidArgument` naming the problem (the caller adds where).
    public func beaconLayout() throws(RegionKitError) -> BeaconLayout {
        try BeaconLayout(tagged: layout, format: format)
    }
}
