import RegionKit
import RegionKitLocation

/// Feeds gpsd into a manager until cancelled: gpsd's reachability drives the circular source's
/// status, and fixes are stamped on arrival (gpsd's own time can be a GPS week rollover away).
/// Shared by `monitor --gpsd` and the daemon's gpsd source.
enum GPSDFeed {
    static func run(host: String, port: UInt16, into manager: LocationManager) async {
        for await event in GPSDClient(host: host, port: port).events() {
            switch event {
            case .connected:
                manager.setSourceStatus(.authorized, for: .circular)
            case .disconnected(let error, _):
                manager.setSourceStatus(.restricted(reason: "gpsd at \(host):\(port) unreachable: \(error)"), for: .circular)
            case .fix(var fix, _):
                fix.timestamp = manager.clock.now
                manager.ingest(fix)
            default:
                break
            }
            if Task.isCancelled { break }
        }
    }
}
