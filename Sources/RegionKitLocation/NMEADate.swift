/// A calendar date as carried by RMC (`ddmmyy`, century inferred: 80–99 → 19xx, else 20xx) or ZDA.
///
/// ```swift
/// let d = NMEADate(year: 2009, month: 12, day: 9)
/// d.daysSinceEpoch   // 14587
/// ```
public struct NMEADate: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int { UTCCalendar.daysSinceEpoch(year: year, month: month, day: day) }
}
