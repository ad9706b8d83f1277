import ArgumentParser
import RegionKit

/// An RSSI filter on the command line: raw, median:SECONDS, mean:SECONDS,
/// trimmed-mean:SECONDS:FRACTION or exponential:HALF_LIFE.
struct RSSIFilterOption: ExpressibleByArgument {
    var filter: RSSIFilter

    init(filter: RSSIFilter) { self.filter = filter }

    init?(argument: String) {
        let parts = argument.lowercased().split(separator: ":").map(String.init)
        let numbers = parts.dropFirst().compactMap(Double.init)
        guard numbers.count == parts.count - 1, numbers.allSatisfy({ $0.isFinite }) else { return nil }
        switch (parts.first, numbers.count) {
        case ("raw", 0): filter = .latest
        case ("median", 1): filter = .median(window: numbers[0])
        case ("altbeacon-running-average", 1): filter = .altBeaconRunningAverage(window: numbers[0])
        case ("mean", 1): filter = .movingAverage(window: numbers[0])
        case ("exponential", 1): filter = .exponential(halfLife: numbers[0])
        case ("trimmed-mean", 2): filter = .trimmedMean(window: numbers[0], trimFraction: numbers[1])
        default: return nil
        }
    }

    /// Checks the parameters (a command's `validate()` calls it): the error names the option,
    /// the parameter and its bounds (``RSSIFilter/maximumWindow``).
    func validate(option: String = "--filter") throws {
        if let problem = filter.problem { throw ValidationError("\(option) \(defaultValueDescription): \(problem)") }
    }

    /// The filter in this option's own syntax (`median:5`).
    var defaultValueDescription: String {
        func number(_ value: Double) -> String { value.compactDescription }
        switch filter {
        case .latest: return "raw"
        case .median(let window): return "median:\(number(window))"
        case .altBeaconRunningAverage(let window): return "altbeacon-running-average:\(number(window))"
        case .movingAverage(let window): return "mean:\(number(window))"
        case .exponential(let halfLife): return "exponential:\(number(halfLife))"
        case .trimmedMean(let window, let trim): return "trimmed-mean:\(number(window)):\(number(trim))"
        }
    }
}
