import Foundation
import RegionKit
import RegionKitConcurrency

/// The times of one timed part of a bench over its alternating rounds: best and median in
/// milliseconds, for the text line and the `--json` fields `<name>_ms_best` / `<name>_ms_median`.
///
/// ```swift
/// var listing = RoundTimes()
/// for _ in 0..<repeats { listing.measure { _ = BeaconReport.all(from: engine) } }
/// line.add("listing", listing)   // listing_ms_best, listing_ms_median
/// ```
struct RoundTimes {
    private(set) var times: [Duration] = []

    /// Times `body` once (one round).
    mutating func measure(_ body: () throws -> Void) rethrows {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        times.append(clock.now - start)
    }

    /// The fastest round, milliseconds (0 before any).
    var best: Double { times.min().map(Self.milliseconds) ?? 0 }
    /// The middle round (the upper of two middles), milliseconds (0 before any).
    var median: Double { times.isEmpty ? 0 : Self.milliseconds(times.sorted()[times.count / 2]) }

    /// "best %8.2f ms   median %8.2f ms".
    var summary: String { String(format: "best %8.2f ms   median %8.2f ms", best, median) }

    static func milliseconds(_ duration: Duration) -> Double { duration.inSeconds * 1_000 }
}

extension JSONLine {
    /// `<name>_ms_best` and `<name>_ms_median`.
    mutating func add(_ name: String, _ times: RoundTimes) {
        add("\(name)_ms_best", times.best)
        add("\(name)_ms_median", times.median)
    }
}
