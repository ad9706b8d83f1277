import RegionKitEngine

extension RegionStore.StoredState {
    /// A region's last state as any ``RegionStoring`` returns it (the memberwise initializer is
    /// internal to this module; this public one takes the state unlabelled).
    ///
    /// ```swift
    /// let stored = RegionStore.StoredState(.inside, since: 12.5, evidence: nil, updatedAt: 12.5)
    /// ```
    public init(_ state: RegionState, since: Double?, evidence: EventEvidence?, updatedAt: Double) {
        self.state = state
        self.since = since
        self.evidence = evidence
        self.updatedAt = updatedAt
    }
}
