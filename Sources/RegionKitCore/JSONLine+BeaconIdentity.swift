extension JSONLine {
    /// Adds the fields that name a beacon, as events and the presence hub's attributes give them:
    /// iBeacon `"uuid", "major", "minor"`; AltBeacon the same after `"format":"altbeacon"` (id1,
    /// id2, id3); Eddystone-UID `"format":"eddystone-uid", "namespace", "instance"` (hex); a
    /// device `"format":"device", "device"`.
    ///
    /// ```swift
    /// var object = JSONLine()
    /// object.addIdentity(beacon.identity)
    /// object.text   // {"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":2}
    /// ```
    public mutating func addIdentity(_ identity: BeaconIdentity) {
        if identity.format != .iBeacon { add("format", identity.format.name) }
        if let device = identity.deviceID {
            add("device", device)
        } else if identity.format == .eddystoneUID {
            add("namespace", BeaconIdentity.hex(identity.namespace))
            add("instance", BeaconIdentity.hex(identity.instance))
        } else {
            add("uuid", identity.uuid.uuidString)
            add("major", Int(identity.major))
            add("minor", Int(identity.minor))
        }
    }
}
