import RegionKitCore
/// How a stream of RSSI samples is smoothed before a distance is estimated.
///
/// The filter is a plain description; its running state is an ``RSSIFilterState`` value, so both
/// can be stored and moved between processes.
///
/// ```swift
/// var state = RSSIFilterState()
/// let filter = RSSIFilter.movingAverage(window: 5)
/// filter.add(-70, at: Timestamp(seconds: 1), to: &state)
/// filter.add(-74, at: Timestamp(seconds: 2), to: &state)
/// filter.value(of: state, at: Timestamp(seconds: 2)) // -72
/// ```
public enum RSSIFilter: Hashable, Sendable, Codable {
    /// The most recent sample.
    case latest
    /// Mean of the samples of the last `window` seconds.
    case movingAverage(window: Double)
    /// Mean of the samples of the last `window` seconds after dropping `trimFraction` of the
    /// lowest and of the highest (the Android Beacon Library's running average uses 20 s, 10 %).
    case trimmedMean(window: Double, trimFraction: Double)
    /// Exponential smoothing whose weight halves every `halfLife` seconds.
    case exponential(halfLife: Double)
    /// Median of the samples of the last `window` seconds (the mean of the two middle ones for an
    /// even count): robust to the deep, short multipath fades of a phone held still.
    case median(window: Double)
    /// The Android Beacon Library's `RunningAverageRssiFilter`: the samples of the last `window`
    /// seconds (its default: 20), sorted, and with more than two of them ⌊n/10⌋ + 1 dropped from
    /// each end before averaging (n = 10 keeps the middle 6; n = 3 keeps the median).
    case altBeaconRunningAverage(window: Double)

    /// The longest window (and half-life) a filter may have, seconds: the filter keeps every
    /// sample of its window, so the bound keeps its memory and work per sample bounded.
    public static let maximumWindow: Double = 600

    /// What is wrong with the parameters (naming the parameter and its bounds), or nil.
    ///
    /// ```swift
    /// RSSIFilter.median(window: 1e4).problem   // "window 10000.0 s must be within (0, 600] s"
    /// ```
    public var problem: String? {
        func window(_ value: Double, _ name: String) -> String? {
            value.isFinite && value > 0 && value <= Self.maximumWindow ? nil : "\(name) \(value) s must be within (0, \(Int(Self.maximumWindow))] s"
        }
        switch self {
        case .latest: return nil
        case .movingAverage(let w), .median(let w), .altBeaconRunningAverage(let w): return window(w, "window")
        case .trimmedMean(let w, let trim):
            return window(w, "window") ?? ((0..<0.5).contains(trim) ? nil : "trim fraction \(trim) must be within [0, 0.5)")
        case .exponential(let halfLife): return window(halfLife, "half-life")
        }
    }

    /// Adds a sample (in dBm) taken at `time`.
    public func add(_ rssi: Double, at time: Timestamp, to state: inout RSSIFilterState) {
        switch self {
        case .latest:
            state.samples = [RSSIFilterState.Sample(time: time, rssi: rssi)]
        case .movingAverage(let window), .trimmedMean(let window, _), .median(let window), .altBeaconRunningAverage(let window):
            state.samples.append(RSSIFilterState.Sample(time: time, rssi: rssi))
            let horizon = time - window
            if let first = state.samples.firstIndex(where: { $0.time > horizon }), first > 0 {
                state.samples.removeFirst(first)
            }
        case .exponential(let halfLife):
            if let previous = state.smoothed, let last = state.smoothedAt, halfLife > 0 {
                let keep = pow2(-(max(0, time - last)) / halfLife)
                state.smoothed = previous * keep + rssi * (1 - keep)
            } else {
                state.smoothed = rssi
            }
            state.smoothedAt = time
        }
    }

    /// The filtered RSSI at `now`, or `nil` when no sample is recent enough.
    public func value(of state: RSSIFilterState, at now: Timestamp) -> Double? {
        switch self {
        case .latest:
            return state.samples.last?.rssi
        case .movingAverage(let window):
            let recent = state.samples.filter { $0.time > now - window }
            guard !recent.isEmpty else { return nil }
            return recent.reduce(0) { $0 + $1.rssi } / Double(recent.count)
        case .trimmedMean(let window, let trimFraction):
            let recent = state.samples.filter { $0.time > now - window }.map(\.rssi).sorted()
            guard !recent.isEmpty else { return nil }
            let drop = Int(Double(recent.count) * min(max(trimFraction, 0), 0.49))
            let kept = recent[drop..<(recent.count - drop)]
            return kept.reduce(0, +) / Double(kept.count)
        case .altBeaconRunningAverage(let window):
            let recent = state.samples.filter { $0.time > now - window }.map(\.rssi).sorted()
            guard !recent.isEmpty else { return nil }
            let drop = recent.count > 2 ? recent.count / 10 + 1 : 0
            let kept = recent[drop..<(recent.count - drop)]
            return kept.reduce(0, +) / Double(kept.count)
        case .exponential:
            return state.smoothed
        case .median(let window):
            let recent = state.samples.filter { $0.time > now - window }.map(\.rssi).sorted()
            guard !recent.isEmpty else { return nil }
            let middle = recent.count / 2
            return recent.count % 2 == 1 ? recent[middle] : (recent[middle - 1] + recent[middle]) / 2
        }
    }

    private func pow2(_ x: Double) -> Double { exp2(x) }

    /// A short label for tables and JSON: `raw`, `mean(3s)`, `trimmed-mean(20s,0.1)`,
    /// `exponential(2s)`, `median(20s)`.
    public var label: String {
        func seconds(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e9 ? "\(Int(value))s" : "\(value)s"
        }
        switch self {
        case .latest: return "raw"
        case .movingAverage(let window): return "mean(\(seconds(window)))"
        case .trimmedMean(let window, let trim): return "trimmed-mean(\(seconds(window)),\(trim))"
        case .exponential(let halfLife): return "exponential(\(seconds(halfLife)))"
        case .median(let window): return "median(\(seconds(window)))"
        case .altBeaconRunningAverage(let window): return "altbeacon-running-average(\(seconds(window)))"
        }
    }
}

/// The running state of an ``RSSIFilter`` for one beacon: recent samples or a smoothed value.
public struct RSSIFilterState: Hashable, Sendable, Codable {
    public struct Sample: Hashable, Sendable, Codable {
        public var time: Timestamp
        public var rssi: Double
    }

    public var samples: [Sample] = []
    public var smoothed: Double?
    public var smoothedAt: Timestamp?

    public init() {}
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
