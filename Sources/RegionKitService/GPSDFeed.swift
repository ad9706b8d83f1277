import Logging
import RegionKit
import RegionKitLocation

/// Feeds gpsd into a manager until cancelled: gpsd's reachability drives the circular source's
/// status, and fixes are stamped on arrival (gpsd's own time can be a GPS week rollover away).
/// Shared by `regionkit monitor --gpsd` and the service's ``ServiceSource/gpsd(_:)`` source.
///
/// ```swift
/// let feed = Task { await GPSDFeed.run(host: "127.0.0.1", port: 2947, into: manager) }
/// // …
/// feed.cancel()
/// ```
public enum GPSDFeed {
    /// - Parameters:
    ///   - activity: records connections, reconnects and fixes (the daemon's source status).
    ///   - report: receives gpsd's availability for the circular regions (default: the manager's
    ///     `setSourceStatus(_:for: .circular)`; the daemon's ``SourceAvailability`` instead).
    ///   - logger: where a line gpsd sent that does not decode is said, the first of each kind
    ///     with its line number and an excerpt (the others are counted among the source's decode
    ///     errors). They were dropped without a word.
    public static func run(host: String, port: UInt16, into manager: LocationManager, activity: SourceActivity? = nil,
                           logger: Logger? = nil, report: (@Sendable (AuthorizationStatus) -> Void)? = nil) async {
        let report = report ?? { status in manager.setSourceStatus(status, for: .circular) }
        var connections = 0
        var logged: Set<String> = []
        for await event in GPSDClient(host: host, port: port).events() {
            switch event {
            case .connected:
                connections += 1
                if connections > 1 { activity?.recordReconnect() }
                activity?.set(.up)
                report(.authorized)
            case .disconnected(let error, _):
                activity?.set(.connecting, detail: "gpsd at \(host):\(port) unreachable: \(error)")
                report(.restricted(reason: "gpsd at \(host):\(port) unreachable: \(error)"))
            case .fix(var fix, _):
                fix.timestamp = manager.clock.now
                activity?.recordInput(at: fix.timestamp.seconds)
                manager.ingest(fix)
            case .diagnostic(let problem) where problem.code == .droppedEvents:
                // Not gpsd's fault: this feed fell behind (each notice sums a run of drops).
                logger?.warning("fell behind gpsd; its oldest events were dropped", metadata: ["gpsd": "\(host):\(port)", "problem": "\(problem)"])
            case .diagnostic(let problem):
                activity?.recordDecodeError(problem.code.rawValue)
                if logged.insert(problem.code.rawValue).inserted {
                    logger?.warning("gpsd sent a line that does not decode; skipped (further ones of this kind are only counted)",
                                    metadata: ["gpsd": "\(host):\(port)", "problem": "\(problem)"])
                }
            default:
                break
            }
            if Task.isCancelled { break }
        }
    }
}
