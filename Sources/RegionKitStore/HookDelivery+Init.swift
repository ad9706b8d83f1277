extension HookDelivery {
    /// A delivery as any ``RegionStoring`` returns it (the memberwise initializer is internal to
    /// this module; this public one takes the id unlabelled).
    ///
    /// ```swift
    /// let delivery = HookDelivery(1, eventID: 7, hook: "on-enter[0]", status: .pending, attempts: 0,
    ///                             nextAttemptAt: 12.5, lastError: nil, deliveredAt: nil)
    /// ```
    public init(_ id: Int64, eventID: Int64, hook: String, status: Status, attempts: Int, nextAttemptAt: Double,
                lastError: String?, deliveredAt: Double?) {
        self.id = id
        self.eventID = eventID
        self.hook = hook
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}
