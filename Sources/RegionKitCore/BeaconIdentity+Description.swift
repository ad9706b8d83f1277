import Foundation

extension BeaconIdentity {
    /// Reads back ``description``: `UUID:MAJOR:MINOR` (iBeacon), `altbeacon:UUID:MAJOR:MINOR`,
    /// `eddystone-uid:NAMESPACE:INSTANCE` (20 and 12 hex digits); the prefixes and hex digits in
    /// any case; `device:ID` (``init(deviceID:)``). `nil` for anything else — the form logged events carry a beacon in
    /// (`didChangeNearestScanner`'s `beacon`), read by the outputs that act on them.
    ///
    /// ```swift
    /// BeaconIdentity(description: "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2")?.format   // .altBeacon
    /// BeaconIdentity(description: identity.description) == identity                               // for every identity
    /// ```
    public init?(description text: String) {
        if text.hasPrefix("device:") {
            self.init(deviceID: String(text.dropFirst("device:".count)))
            return
        }
        let lower = text.lowercased()
        if lower.hasPrefix("eddystone-uid:") {
            let parts = text.dropFirst("eddystone-uid:".count).split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 20, parts[1].count == 12,
                  let namespace = BeaconIdentityConstraint.bytes(hex: String(parts[0])),
                  let instance = BeaconIdentityConstraint.bytes(hex: String(parts[1])) else { return nil }
            self.init(eddystoneNamespace: namespace, instance: instance)
            return
        }
        let format: BeaconFormat = lower.hasPrefix("altbeacon:") ? .altBeacon : .iBeacon
        let body = format == .altBeacon ? text.dropFirst("altbeacon:".count) : text[...]
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let uuid = UUID(uuidString: String(parts[0])),
              let major = UInt16(parts[1]), let minor = UInt16(parts[2]) else { return nil }
        self.init(uuid: uuid, major: major, minor: minor, format: format)
    }
}
