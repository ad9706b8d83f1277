import RegionKitCore
import RegionKitHCI

/// One advertising frame a scanner counted (scan-response repeats already removed), with when it
/// was received and, when its data is an iBeacon, the decoded frame.
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
    public var iBeacon: IBeaconFrame?

    public init(advertisement: Advertisement, timestamp: Timestamp) {
        self.advertisement = advertisement
        self.timestamp = timestamp
        iBeacon = try? IBeaconFrame.decode(advertisement.data)
    }

    /// The engine's input for this frame: nil unless it is an iBeacon with an RSSI (a report
    /// with RSSI 127, "not available", cannot feed ranging or distance, so it is not guessed).
    public func observation(scannerID: String?) -> BeaconObservation? {
        guard let iBeacon, let rssi = advertisement.rssi else { return nil }
        return BeaconObservation(identity: iBeacon.identity, rssi: Int(rssi), measuredPower: Int(iBeacon.measuredPower),
                                 timestamp: timestamp, scannerID: scannerID)
    }
}

extension AdvertisementSighting {
    /// One JSON object (the `regionkit scan --json` line):
    /// `{"t", "address", "addressType", "eventType", "rssi", "txPower", "data", "ibeacon"?}`;
    /// `rssi`/`txPower` are null when the controller did not report them, `data` is hex.
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
        return line.text
    }
}
