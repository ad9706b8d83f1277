import Foundation
@testable import RegionKitBluetooth

/// Collects a manager's events.
final class EventLog: LocationManagerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LocationEvent] = []
    private var delivered: [Double] = []
    var events: [LocationEvent] { lock.withLock { stored } }
    /// Wall-clock time (Unix seconds) at which the first event of type `type` reached the delegate.
    func deliveryTime(of type: String) -> Double? {
        lock.withLock { stored.firstIndex { $0.typeName == type }.map { delivered[$0] } }
    }
    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        let now = Date().timeIntervalSince1970
        lock.withLock {
            stored.append(event)
            delivered.append(now)
        }
    }
    func types(_ region: String? = nil) -> [String] {
        events.filter { region == nil || $0.regionIdentifier == region }.map(\.typeName)
    }
}
