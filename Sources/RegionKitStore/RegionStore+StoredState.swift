import RegionKitEngine

extension RegionStore.StoredState {
    /// A region's last state as any ``RegionStoring`` returns it.
    ///
    /// ```swift
    /// let stored = RegionStore.StoredState(state: .inside, since: 12.5, evidence: nil, updatedAt: 12.5)
    /// ```
    public init(state: RegionState, since: Double?, evidence: EventEvidence?, updatedAt: Double) {
        self.state = state
        self.since = since
        self.evidence = evidence
        self.updatedAt = updatedAt
    }
}
