import RegionKitCore
import RegionKitHCI

/// One advertising frame a scanner counted (scan-response repeats already removed), with when it
/// was received and, when its data is a beacon (iBeacon, AltBeacon, Eddystone UID/URL/TLM, or a
/// configured layout's), the decoded frame.
///
/// ```swift
/// for await event in scanner.events() {
///     guard case .sighting(let sighting) = event else { continue }
///     print(sighting.advertisement.address, sighting.iBeacon?.identity as Any)
///     if let observation = sighting.observation(scannerID: "desk") { manager.ingest(observation) }
/// }
/// ```
public struct AdvertisementSighting: Hashable, Sendable {
    public var advertisement: Advertisement
    /// When it was received, on the scanner's clock (or as recorded, for a replay).
    public var timestamp: Timestamp
    /// The iBeacon carried by the data, if it is one.
    public var iBeacon: IBeaconFrame? {
        if case .iBeacon(let frame) = frame { return frame }
        return nil
    }
    /// The beacon frame carried by the data, if any.
    public var frame: BeaconFrame?
    /// What a configured layout decoded, when no built-in format matched.
    public var layoutMatch: LayoutMatch?
    /// The latest Eddystone-TLM heard from the same address (set by the scanner's pipeline).
    public var telemetry: EddystoneTelemetry?

    /// A custom layout's decoding of the data.
    public struct LayoutMatch: Hashable, Sendable {
        public var layout: BeaconLayout
        public var decoded: BeaconLayout.Decoded
    }

    public init(advertisement: Advertisement, timestamp: Timestamp) {
        self.advertisement = advertisement
        self.timestamp = timestamp
        frame = try? BeaconFrame.decode(advertisement.data)
    }

    /// Tries `layouts` in order; the first that decodes the data is kept in ``layoutMatch``.
    public mutating func decodeLayouts(_ layouts: [BeaconLayout]) {
        for layout in layouts {
            if let decoded = try? layout.decode(advertisement.data) {
                layoutMatch = LayoutMatch(layout: layout, decoded: decoded)
                return
            }
        }
    }

    /// The identity a region can match (iBeacon, AltBeacon, Eddystone-UID, a layout with a format).
    public var identity: BeaconIdentity? {
        if let identity = frame?.identity { return identity }
        if let layoutMatch { return layoutMatch.layout.identity(of: layoutMatch.decoded) }
        return nil
    }

    /// Expected RSSI at 1 m of ``identity``'s frame.
    public var measuredPower: Int? {
        if let frame { return frame.measuredPower }
        return layoutMatch?.decoded.measuredPower
    }

    /// The engine's input for this frame: nil unless it carries a beacon identity and an RSSI (a
    /// report with RSSI 127, "not available", cannot feed ranging or distance, so it is not guessed).
    public func observation(scannerID: String?) -> BeaconObservation? {
        guard let identity, let rssi = advertisement.rssi else { return nil }
        return BeaconObservation(identity: identity, rssi: Int(rssi), measuredPower: measuredPower,
                                 timestamp: timestamp, scannerID: scannerID, telemetry: telemetry)
    }
}

extension AdvertisementSighting {
    /// One JSON object (the `regionkit scan --json` line):
    /// `{"t", "address", "addressType", "eventType", "rssi", "txPower", "data", "ibeacon"? | "altbeacon"? |
    /// "eddystone"? | "layout"?, "telemetry"?}`; `rssi`/`txPower` are null when the controller did not
    /// report them, `data` is hex.
    ///
    /// ```swift
    /// sighting.jsonLine(origin: .zero)
    /// // {"t":1.204,"address":"C0:FF:EE:00:00:01","addressType":"public","eventType":"legacy(ADV_NONCONN_IND)",
    /// //  "rssi":-50,"txPower":null,"data":"0201061aff4c00…","ibeacon":{"uuid":"E2C5…","major":1,"minor":2,"measuredPower":-59}}
    /// ```
    public func jsonLine(origin: Timestamp) -> String {
        var line = JSONLine()
        line.add("t", timestamp - origin, decimals: 3)
        line.add("address", advertisement.address.description)
        line.add("addressType", advertisement.addressType.description)
        line.add("eventType", advertisement.kind.description)
        if let rssi = advertisement.rssi { line.add("rssi", Int(rssi)) } else { line.addRaw("rssi", json: "null") }
        if let txPower = advertisement.txPower { line.add("txPower", Int(txPower)) } else { line.addRaw("txPower", json: "null") }
        line.add("data", advertisement.data.map { byte in
            let text = String(byte, radix: 16)
            return byte < 0x10 ? "0" + text : text
        }.joined())
        if let iBeacon {
            var beacon = JSONLine()
            beacon.add("uuid", iBeacon.identity.uuid.uuidString)
            beacon.add("major", Int(iBeacon.identity.major))
            beacon.add("minor", Int(iBeacon.identity.minor))
            beacon.add("measuredPower", Int(iBeacon.measuredPower))
            if let name = iBeacon.localName { beacon.add("localName", name) }
            line.add("ibeacon", object: beacon)
        }
        switch frame {
        case .altBeacon(let frame)?:
            var beacon = JSONLine()
            beacon.add("id1", frame.identity.uuid.uuidString)
            beacon.add("id2", Int(frame.identity.major))
            beacon.add("id3", Int(frame.identity.minor))
            beacon.add("referenceRSSI", Int(frame.referenceRSSI))
            beacon.add("manufacturer", Int(frame.manufacturerID))
            beacon.add("reserved", Int(frame.reserved))
            line.add("altbeacon", object: beacon)
        case .eddystone(let frame)?:
            var beacon = JSONLine()
            switch frame {
            case .uid(let uid):
                beacon.add("frame", "uid")
                beacon.add("namespace", BeaconIdentity.hex(uid.identity.namespace))
                beacon.add("instance", BeaconIdentity.hex(uid.identity.instance))
                beacon.add("rangingData", Int(uid.rangingData))
                beacon.add("measuredPower", uid.measuredPower)
            case .url(let url):
                beacon.add("frame", "url")
                beacon.add("url", url.url)
                beacon.add("txPower", Int(url.txPower))
            case .tlm(let tlm):
                beacon.add("frame", "tlm")
                beacon.add("telemetry", object: tlm.jsonObject())
            }
            line.add("eddystone", object: beacon)
        default:
            break
        }
        if let layoutMatch {
            var beacon = JSONLine()
            beacon.add("layout", layoutMatch.layout.expression)
            beacon.addRaw("identifiers", json: "[" + layoutMatch.decoded.identifiers.map { "\"\(BeaconIdentity.hex($0))\"" }.joined(separator: ",") + "]")
            if let power = layoutMatch.decoded.measuredPower { beacon.add("measuredPower", power) }
            beacon.addRaw("data", json: "[" + layoutMatch.decoded.dataFields.map(String.init).joined(separator: ",") + "]")
            line.add("layout", object: beacon)
        }
        if let telemetry, identity != nil { line.add("telemetry", object: telemetry.jsonObject()) }
        return line.text
    }
}
