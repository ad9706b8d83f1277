/// A point in time, in seconds since an origin chosen by the clock that produced it.
///
/// Real clocks use the Unix epoch; virtual clocks (simulation, replay) use the start of the run.
/// It is a plain value so that engine state can be stored, sharded and compared across processes.
///
/// ```swift
/// let t0 = Timestamp(seconds: 10)
/// let t1 = t0 + 1.5
/// t1 - t0 // 1.5
/// ```
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Seconds since the clock's origin.
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// The origin of a clock: `Timestamp(seconds: 0)`.
    public static let zero = Timestamp(seconds: 0)

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.seconds < rhs.seconds }
    public static func + (lhs: Timestamp, rhs: Double) -> Timestamp { Timestamp(seconds: lhs.seconds + rhs) }
    public static func - (lhs: Timestamp, rhs: Double) -> Timestamp { Timestamp(seconds: lhs.seconds - rhs) }
    /// The interval between two timestamps, in seconds.
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Double { lhs.seconds - rhs.seconds }

    public init(from decoder: any Decoder) throws {
        seconds = try decoder.singleValueContainer().decode(Double.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }

    public var description: String { "t=\(seconds)s" }
}
