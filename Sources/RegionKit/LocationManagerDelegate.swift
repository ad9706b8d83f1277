import RegionKitCore
import RegionKitEngine
/// Receives a ``LocationManager``'s callbacks, with Core Location's names. Every method has an
/// empty default, so implement only what you need.
///
/// ```swift
/// final class Doorbell: LocationManagerDelegate {
///     func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {
///         print("welcome to \(region.identifier)")
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
    func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: RegionKitError)
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
    /// Every event, with its timestamp and evidence, before the specific callback.
    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent)
}

extension LocationManagerDelegate {
    public func locationManager(_ manager: LocationManager, didStartMonitoringFor region: Region) {}
    public func locationManager(_ manager: LocationManager, monitoringDidFailFor region: Region, withError error: RegionKitError) {}
    public func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {}
    public func locationManager(_ manager: LocationManager, didExitRegion region: Region) {}
    public func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: Region) {}
    public func locationManager(_ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint) {}
    public func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: RegionKitError) {}
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
    public func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {}
}
