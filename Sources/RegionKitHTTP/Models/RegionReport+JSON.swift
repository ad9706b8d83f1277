import RegionKitCore
import RegionKitEngine

extension RegionReport {
    /// The reports as `GET /v1/regions` answers them, `{"changesRefused"?, "regions": [...]}`,
    /// and for a page (``RegionPage``) its `nextCursor` (null on the last), `preceding` and `total`: the bytes
    /// `JSONEncoder` with `.sortedKeys` writes for them, without its keyed containers (46 % of a
    /// listing's time at 10,000 regions). `RegionReportJSONTests` holds the two equal.
    ///
    /// ```swift
    /// let body = RegionReport.listingJSON(reports, changesRefused: nil)   // {"regions":[{"identifier":"lobby",…}]}
    /// let first = RegionReport.listingJSON(page.reports, changesRefused: nil, page: (page.total, page.preceding, page.nextCursor))
    /// ```
    static func listingJSON(_ reports: [RegionReport], changesRefused: String?,
                            page: (total: Int, preceding: Int, nextCursor: String?)? = nil) -> [UInt8] {
        var json = JSONBytes(capacity: 64 + reports.count * 400)
        json.beginObject()
        if let changesRefused {
            json.key("changesRefused"); json.string(changesRefused)
        }
        if let page {
            json.key("nextCursor")
            if let next = page.nextCursor { json.string(next) } else { json.null() }
            json.key("preceding"); json.number(page.preceding)
        }
        json.key("regions")
        json.beginArray()
        for report in reports { report.write(into: &json) }
        json.endArray()
        if let page {
            json.key("total"); json.number(page.total)
        }
        json.endObject()
        return json.bytes
    }

    /// One report's JSON, as `GET /v1/regions/{id}` answers it (the same bytes as `JSONEncoder`'s).
    var json: [UInt8] {
        var json = JSONBytes(capacity: 512)
        write(into: &json)
        return json.bytes
    }

    /// The members in sorted key order; absent optionals left out, as the synthesized `Encodable` does.
    func write(into json: inout JSONBytes) {
        json.beginObject()
        if let device { json.key("device"); json.string(device) }
        if let format { json.key("format"); json.string(format) }
        json.key("identifier"); json.string(identifier)
        if let instance { json.key("instance"); json.string(instance) }
        json.key("kind"); json.string(kind)
        if let lastEvidence { json.key("lastEvidence"); lastEvidence.write(into: &json) }
        if let lastReason { json.key("lastReason"); json.string(lastReason) }
        if let latitude { json.key("latitude"); json.number(latitude) }
        if let longitude { json.key("longitude"); json.number(longitude) }
        if let major { json.key("major"); json.number(major) }
        if let minor { json.key("minor"); json.number(minor) }
        if let namespace { json.key("namespace"); json.string(namespace) }
        if let notifyEntryStateOnDisplay { json.key("notifyEntryStateOnDisplay"); json.bool(notifyEntryStateOnDisplay) }
        json.key("notifyOnEntry"); json.bool(notifyOnEntry)
        json.key("notifyOnExit"); json.bool(notifyOnExit)
        json.key("origin"); json.string(origin)
        if let radius { json.key("radius"); json.number(radius) }
        if let scanner { json.key("scanner"); json.string(scanner) }
        if let since { json.key("since"); json.number(since) }
        json.key("stale"); json.bool(stale)
        json.key("state"); json.string(state)
        if let uuid { json.key("uuid"); json.string(uuid) }
        if let waitingForSource { json.key("waitingForSource"); json.string(waitingForSource) }
        json.endObject()
    }
}

extension EventEvidence {
    /// As its synthesized `Encodable` under `.sortedKeys` (``RegionReport/write(into:)``).
    func write(into json: inout JSONBytes) {
        json.beginObject()
        if let beacon { json.key("beacon"); beacon.write(into: &json) }
        if let distance { json.key("distance"); json.number(distance) }
        if let dwell { json.key("dwell"); json.number(dwell) }
        if let exitThreshold { json.key("exitThreshold"); json.number(exitThreshold) }
        if let horizontalAccuracy { json.key("horizontalAccuracy"); json.number(horizontalAccuracy) }
        if let lastSightingAge { json.key("lastSightingAge"); json.number(lastSightingAge) }
        if let reason { json.key("reason"); json.string(reason) }
        if let rssi { json.key("rssi"); json.number(rssi) }
        if let scannerID { json.key("scannerID"); json.string(scannerID) }
        json.endObject()
    }
}

extension BeaconIdentity {
    /// As its `Encodable` under `.sortedKeys`: a device as `{"device", "format"}`, else
    /// `{"format"? (not iBeacon), "major", "minor", "uuid"}`.
    func write(into json: inout JSONBytes) {
        json.beginObject()
        if let deviceID {
            json.key("device"); json.string(deviceID)
            json.key("format"); json.string(format.name)
        } else {
            if format != .iBeacon { json.key("format"); json.string(format.name) }
            json.key("major"); json.number(major)
            json.key("minor"); json.number(minor)
            json.key("uuid"); json.string(uuid.uuidString)
        }
        json.endObject()
    }
}
