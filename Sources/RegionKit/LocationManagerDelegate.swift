import RegionKitCore
import RegionKitEngine
/// Receives a ``LocationManager``'s callbacks, with Core Location's names. Every method has an
/// empty default, so implement only what you need — and spell it exactly: a method whose
/// signature differs (`didEnter region:`, `didRangeBeacons beacons:`) is a new method the
/// compiler accepts without a word and the manager never calls. To have the compiler check
/// that every event is handled, read ``LocationManager/events(bufferingPolicy:)`` with an
/// exhaustive `switch event.kind`.
///
/// Callbacks are synchronous, one at a time and in order, on whichever thread is delivering: the
/// caller of ``LocationManager/ingest(_:)-(BeaconObservation)`` or of a start/stop call, or the
/// clock's timer (``SystemClock``: a dispatch queue). An event produced while another thread
/// delivers is delivered by that thread, possibly after the call that produced it has returned.
/// The delegate is therefore `Sendable`: keep
/// mutable state behind a lock (`Mutex`), or hand each event to an actor. An `@MainActor` type
/// cannot conform; read ``LocationManager/events(bufferingPolicy:)`` from a main-actor task instead.
///
/// ```swift
/// final class Doorbell: LocationManagerDelegate {
///     func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {
///         print("welcome to \(region.identifier)")
///     }
/// }
///
/// final class Occupancy: LocationManagerDelegate {
///     let inside = Mutex<Set<String>>([])          // import Synchronization
///     func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: Region) {
///         inside.withLock { if state == .inside { $0.insert(region.identifier) } else { $0.remove(region.identifier) } }
///     }
/// }
/// ```
public protocol LocationManagerDelegate: AnyObject, Sendable {
    func locationManager(_ manager: LocationManager, didStartMonitoringFor region: Region)
    func locationManager(_ manager: LocationManager, monitoringDidFailFor region: Region, withError error: RegionKitError)
    func locationManager(_ manager: LocationManager, didEnterRegion region: Region)
    func locationManager(_ manager: LocationManager, didExitRegion region: Region)
    func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: Region)
    func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint)
    /// A ranging delivery with the ranging's label: the region's identifier for
    /// ``LocationManager/startRangingBeacons(in:)`` (as Core Location's `didRangeBeacons:inRegion:`
    /// named the region), the constraint's text for ``LocationManager/startRangingBeacons(satisfying:)``.
    /// Two regions ranging one UUID give two deliveries a second, told apart here. By default it
    /// calls ``locationManager(_:didRange:satisfying:)``; implement one of the two.
    ///
    /// ```swift
    /// func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint, label: String) {
    ///     print(label, beacons.first?.proximity as Any)   // "front-door near", "back-door far"
    /// }
    /// ```
    func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint, label: String)
    func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: RegionKitError)
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
    /// Every event, with its timestamp and evidence, before the specific callback.
    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent)
    /// Called after a run of events delivered together (those produced by one call, or queued
    /// while an earlier run was delivered: a backlog comes as one run), on the delivering thread:
    /// the moment to commit work buffered per event, such as one database transaction for all.
    ///
    /// ```swift
    /// func locationManagerDidFinishDelivering(_ manager: LocationManager) { try? log.commit() }
    /// ```
    func locationManagerDidFinishDelivering(_ manager: LocationManager)
}

extension LocationManagerDelegate {
    public func locationManager(_ manager: LocationManager, didStartMonitoringFor region: Region) {}
    public func locationManager(_ manager: LocationManager, monitoringDidFailFor region: Region, withError error: RegionKitError) {}
    public func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {}
    public func locationManager(_ manager: LocationManager, didExitRegion region: Region) {}
    public func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: Region) {}
    public func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint) {}
    public func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint, label: String) {
        locationManager(manager, didRange: beacons, satisfying: constraint)
    }
    public func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: RegionKitError) {}
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
    public func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {}
    public func locationManagerDidFinishDelivering(_ manager: LocationManager) {}
}
