import RegionKitCore
import RegionKitStore

extension RegionReport {
    /// A configured region of a cluster with its merged state from the shared store (`unknown`
    /// until a partition has decided it). A merged state carries no evidence of its own and is
    /// never stale: it is the union of the partitions' latest contributions.
    ///
    /// ```swift
    /// RegionReport(region: lobby, origin: .configuration, merged: states["lobby"])
    /// ```
    init(region: Region, origin: RegionOrigin?, merged: RegionStore.StoredState?) {
        self.init(region: region, origin: origin, state: merged?.state ?? .unknown, since: merged?.since, stale: false)
        if let merged, let evidence = merged.evidence {
            lastEvidence = evidence
            lastReason = evidence.reason
        }
    }
}
