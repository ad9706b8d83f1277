import RegionKitCore

/// A whole gateway recording in memory, put back in time order, with what its file order says
/// about the gateways: each scanner uploads its own sightings, so the file interleaves scanners
/// late by up to a few seconds (batching, or a scanner's clock running behind another's).
///
/// Offline evaluation sorts the whole recording (stable: equal times keep file order), which is
/// what an unbounded `ReorderBuffer` (RegionKitEngine) would do; ``maximumLateness`` says how large a live
/// reorder window would have had to be.
///
/// ```swift
/// let recording = try GatewayRecording(path: "FourScannersRun1-2015-03-07.json.gz")
/// recording.maximumLateness                  // 1.84: seconds some sightings arrived behind newer ones
/// for observation in recording.observations { session.feed(observation) }   // t = 0 at the earliest sighting
/// ```
public struct GatewayRecording: Sendable {
    /// Where it was read from (for messages).
    public let path: String
    /// Every sighting, in time order.
    public let sightings: [GatewaySighting]
    /// Unix epoch milliseconds of the earliest sighting: t = 0 of ``observations``.
    public let originMilliseconds: Int64
    /// The largest delay, in seconds, between a sighting's time and the newest time already seen
    /// earlier in the file.
    public let maximumLateness: Double
    /// For each scanner, the median of that delay over its sightings (0 when it is never behind):
    /// a scanner constantly behind the others by the same amount has a clock behind theirs, or a
    /// slower upload path.
    public let medianLateness: [String: Double]
    /// What reading the file found: damaged sightings skipped, where reading stopped. A damaged
    /// file keeps every sighting read before (and around) the damage; ``GatewayReadReport/lostData``
    /// says whether anything was left out.
    public private(set) var readReport = GatewayReadReport()

    /// Reads and sorts a recording (`.json` or `.json.gz`), keeping what a damaged file still
    /// holds (see ``readReport``). A file without any readable sighting is an error naming the
    /// file and its first problem.
    public init(path: String) throws {
        var inFileOrder: [GatewaySighting] = []
        let report = try GatewayFileReader(path: path).read { inFileOrder.append($0) }
        guard !inFileOrder.isEmpty else {
            let problems = report.problems
            throw RegionKitError(.malformedInput, "\(path): no sightings in the gateway recording" + (problems.isEmpty ? "" : ": " + problems.joined(separator: "; ")))
        }
        self.init(fileOrder: inFileOrder, path: path)
        readReport = report
    }

    /// A recording from sightings in the order they were received (tests, other readers).
    /// - Precondition: `fileOrder` is not empty.
    public init(fileOrder: [GatewaySighting], path: String) {
        precondition(!fileOrder.isEmpty, "a gateway recording needs at least one sighting")
        self.path = path
        var newest = Int64.min
        var worst: Int64 = 0
        var lateness: [String: [Int64]] = [:]
        for sighting in fileOrder {
            let late = newest == .min ? 0 : max(0, newest.subtractingReportingOverflow(sighting.timeMilliseconds).overflow ? .max : newest - sighting.timeMilliseconds)
            worst = max(worst, late)
            lateness[sighting.scannerID, default: []].append(late)
            newest = max(newest, sighting.timeMilliseconds)
        }
        maximumLateness = Double(worst) / 1000
        medianLateness = lateness.mapValues { values in
            let sorted = values.sorted()
            return Double(sorted[(sorted.count - 1) / 2]) / 1000
        }
        sightings = fileOrder.enumerated()
            .sorted { ($0.element.timeMilliseconds, $0.offset) < ($1.element.timeMilliseconds, $1.offset) }
            .map(\.element)
        originMilliseconds = sightings[0].timeMilliseconds
    }

    /// The sightings as engine observations, in time order, timed in seconds since ``originMilliseconds``.
    public var observations: [BeaconObservation] {
        sightings.map { $0.observation(originMilliseconds: originMilliseconds) }
    }

    /// Seconds from the earliest to the latest sighting.
    public var duration: Double {
        GatewaySighting.seconds(from: originMilliseconds, to: sightings[sightings.count - 1].timeMilliseconds)
    }

    /// The file name without its folder (ground truth is looked up by it).
    public var fileName: String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
