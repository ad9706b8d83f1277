/// A labelled stretch of time: a beacon was in `room` (a scanner ID) from `start` to `end`, in
/// seconds. The ground truth (``BeaconRunGroundTruth``) holds them in Unix epoch seconds; the
/// evaluation moves them onto a recording's clock (``onRecordingClock(originMilliseconds:)``) and
/// scores nearest-scanner decisions against them (``ReplayMetrics/roomScore(decisions:periods:tolerance:within:)``).
///
/// `room == nil` marks a transition (the beacon was being carried): never scored. `start` or `end`
/// `nil` means the recording's own start or end.
///
/// ```swift
/// let period = RoomPeriod(start: 1_425_757_571, end: 1_425_757_586, room: "Room201")
/// period.onRecordingClock(originMilliseconds: 1_425_757_567_417).start // 3.583
/// ```
public struct RoomPeriod: Hashable, Sendable {
    public var start: Double?
    public var end: Double?
    public var room: String?

    public init(start: Double?, end: Double?, room: String?) {
        self.start = start
        self.end = end
        self.room = room
    }

    /// The period in seconds since `originMilliseconds` (Unix epoch milliseconds), from a period in
    /// Unix epoch seconds. The subtraction is done in whole milliseconds, so a recording's clock
    /// sees exactly the README's times (no rounding of ~1.4e9 s values).
    public func onRecordingClock(originMilliseconds: Int64) -> RoomPeriod {
        func shift(_ seconds: Double?) -> Double? {
            seconds.map { Double(Int64((($0) * 1000).rounded()) - originMilliseconds) / 1000 }
        }
        return RoomPeriod(start: shift(start), end: shift(end), room: room)
    }
}
