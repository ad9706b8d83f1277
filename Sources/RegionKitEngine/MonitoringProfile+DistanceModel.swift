import RegionKitCore
extension MonitoringProfile {
    /// Uses a calibrated model file: its distance model and the RSSI filter it was fitted with.
    ///
    /// ```swift
    /// var profile = MonitoringProfile.responsive
    /// profile.use(try DistanceModelFile(json: text, source: "model.json"))
    /// profile.distanceModel.name // "regionkit-linear"
    /// ```
    public mutating func use(_ file: DistanceModelFile) {
        distanceModel = file.distanceModel
        rssiFilter = file.filter
    }
}
