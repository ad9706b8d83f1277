import RegionKitCore

extension EddystoneTelemetry {
    /// The telemetry as a JSON object, as `scan --json` and `monitor --json` print it:
    /// `{"version", "batteryMillivolts" (null: not supported), "temperature" (°C, null: not
    /// supported), "advertisingCount", "uptime" (s)}`; the counters are null when the scanner did not
    /// forward them (MQTT sources).
    ///
    /// ```swift
    /// tlm.jsonObject().text // {"version":0,"batteryMillivolts":3000,"temperature":24.5,"advertisingCount":256,"uptime":60}
    /// ```
    public func jsonObject() -> JSONLine {
        var object = JSONLine()
        object.add("version", Int(version))
        if let batteryMillivolts { object.add("batteryMillivolts", Int(batteryMillivolts)) } else { object.addRaw("batteryMillivolts", json: "null") }
        if let temperature { object.add("temperature", temperature, decimals: 2) } else { object.addRaw("temperature", json: "null") }
        if let advertisingCount { object.add("advertisingCount", Int(advertisingCount)) } else { object.addRaw("advertisingCount", json: "null") }
        if let uptime { object.add("uptime", uptime, decimals: 1) } else { object.addRaw("uptime", json: "null") }
        return object
    }
}
