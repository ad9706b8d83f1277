import RegionKitCore

extension MonitoringProfile {
    /// Why `region` is too large to monitor under this profile (a circle with a radius above
    /// ``maximumRegionMonitoringDistance``, code `radiusTooLarge`), or nil: the one rule the
    /// engine's registration and the daemon's configuration check both apply.
    ///
    /// ```swift
    /// MonitoringProfile.responsive.radiusRefusal(for: hugeCircle)?.code   // .radiusTooLarge
    /// ```
    public func radiusRefusal(for region: Region) -> RegionKitError? {
        guard case .circular(let circle) = region, circle.radius > maximumRegionMonitoringDistance else { return nil }
        return RegionKitError(.radiusTooLarge, """
            region '\(region.identifier)': radius \(circle.radius.compactDescription) m exceeds the profile's \
            maximumRegionMonitoringDistance, \(maximumRegionMonitoringDistance.compactDescription) m
            """)
    }
}
