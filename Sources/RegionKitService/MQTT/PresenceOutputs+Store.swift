import Logging
import RegionKitCore
import RegionKitStore

extension PresenceOutputs {
    /// The beacons `output` announced to Home Assistant before, read back from `store`; a
    /// stored name that is no beacon is left out with a warning.
    ///
    /// ```swift
    /// outputs.restoreAnnounced(try await PresenceOutputs.storedAnnouncements(of: "mqtt:home", in: store, logger: logger))
    /// ```
    public static func storedAnnouncements(of output: String, in store: any RegionStoring, logger: Logger) async throws -> Set<BeaconIdentity> {
        var beacons = Set<BeaconIdentity>()
        var unreadable: [String] = []
        for name in try await store.announcedBeacons(output) {
            if let identity = BeaconIdentity(description: name) { beacons.insert(identity) } else { unreadable.append(name) }
        }
        if let first = unreadable.first {
            logger.warning("stored Home Assistant announcements name no beacon: left out",
                           metadata: ["output": "\(output)", "count": "\(unreadable.count)", "first": "\(first.prefix(120))"])
        }
        return beacons
    }

    /// Records the beacons of `after` not in `before` as announced by `output` (once the broker
    /// acknowledged their entities). A failure is logged: those beacons are announced again
    /// after a restart, with no harm but a repeated configuration.
    static func recordAnnouncements(_ after: Set<BeaconIdentity>, since before: Set<BeaconIdentity>, of output: String,
                                    in store: any RegionStoring, logger: Logger) async {
        guard after.count > before.count else { return }
        let added = after.subtracting(before).map(\.description).sorted()
        do { try await store.addAnnouncedBeacons(added, output: output) } catch {
            logger.warning("cannot record the beacons announced to Home Assistant (announced again after a restart)",
                           metadata: ["output": "\(output)", "beacons": "\(added.count)", "error": "\(error)"])
        }
    }
}
