import Foundation
@testable import RegionKitEngine

/// Small builders shared by the engine tests.
enum Fixture {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let a = BeaconIdentity(uuid: uuid, major: 0, minor: 1)
    static let b = BeaconIdentity(uuid: uuid, major: 0, minor: 2)

    static func region(_ id: String, major: UInt16? = nil, minor: UInt16? = nil, configure: (inout BeaconRegion) -> Void = { _ in }) -> Region {
        var region = try! BeaconRegion(identifier: id, uuid: uuid, major: major, minor: minor)
        configure(&region)
        return .beacon(region)
    }

    static func engine(_ profile: MonitoringProfile = .coreLocation, automation: Automation = Automation(),
                       sources: [RegionKind: AuthorizationStatus] = [.beacon: .authorized, .circular: .authorized]) -> MonitoringEngine {
        MonitoringEngine(profile: profile, automation: automation, sources: sources)
    }

    static func seen(_ identity: BeaconIdentity, at t: Double, rssi: Int = -65, power: Int? = -59, scanner: String? = nil) -> BeaconObservation {
        BeaconObservation(identity: identity, rssi: rssi, measuredPower: power, timestamp: Timestamp(seconds: t), scannerID: scanner)
    }

    /// Sightings of `identity` every `interval` seconds in [from, to).
    static func stream(_ identity: BeaconIdentity, from: Double, to: Double, every interval: Double, rssi: Int = -65) -> [BeaconObservation] {
        stride(from: from, to: to, by: interval).map { seen(identity, at: $0, rssi: rssi) }
    }

    static func feed(_ engine: inout MonitoringEngine, _ observations: [BeaconObservation]) -> [LocationEvent] {
        observations.flatMap { engine.ingest($0) }
    }
}

extension Array where Element == LocationEvent {
    /// `type:region` strings, e.g. `didEnterRegion:lobby`, `didDetermineState:lobby:inside`.
    var summary: [String] {
        map { event in
            var text = "\(event.typeName):\(event.regionIdentifier ?? "-")"
            if case .didDetermineState(let state, _) = event.kind { text += ":\(state.rawValue)" }
            return text
        }
    }

    func of(_ type: String, _ region: String? = nil) -> [LocationEvent] {
        filter { $0.typeName == type && (region == nil || $0.regionIdentifier == region) }
    }

    var rangings: [(time: Double, beacons: [Beacon])] {
        compactMap { event in
            if case .didRangeBeacons(let beacons, _, _) = event.kind { return (event.timestamp.seconds, beacons) }
            return nil
        }
    }
}
