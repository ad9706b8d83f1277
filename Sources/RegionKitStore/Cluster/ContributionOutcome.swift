/// What ``ClusterStoring/applyContribution(region:lease:member:write:state:since:time:events:)`` did.
public enum ContributionOutcome: Hashable, Sendable {
    /// The lease has moved on (another member holds the partition, or it expired): nothing was written.
    case fenced
    /// The contribution was written; the region's merged state did not change.
    case unchanged
    /// The merged state changed: the new state row and these events (with their ids) were committed
    /// with the contribution, in one transaction.
    case changed([StoredEvent])
}
