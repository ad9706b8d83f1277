import FuzzSupport
import Foundation
import RegionKitCore
import RegionKitLocation

/// GPX documents (raw bytes, so invalid UTF-8 reaches the XML parser), then the points to fixes
/// with each timing rule.
enum GPXFuzz {
    static func run(_ data: [UInt8]) {
        guard let document = try? GPXReader.read(data: Data(data)) else { return }
        let points = document.waypoints + document.routes.flatMap(\.points) + document.tracks.flatMap(\.points)
        for timing in [GPXReader.Timing.recorded, .constantSpeed(metresPerSecond: 1.4, start: .zero),
                       .automatic(speed: 1.4, start: Timestamp(seconds: 1_700_000_000))] {
            let timed = GPXReader.fixes(points, timing: timing)
            guard timed.fixes.count <= points.count else { FuzzTarget.fail("\(timed.fixes.count) fixes from \(points.count) points") }
        }
    }
}
