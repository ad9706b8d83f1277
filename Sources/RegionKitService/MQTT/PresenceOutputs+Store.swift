import Logging
import RegionKitCore
import RegionKitStore

extension PresenceOutputs {
    /// The beacons `output` announced to Home Assistant before, and those it dismissed (their
    /// devices deleted in Home Assistant), read back from `store`; a stored name that is no beacon
    /// is left out with a warning.
    ///
    /// ```swift
    /// let stored = try await PresenceOutputs.storedAnnouncements(of: "mqtt:home", in: store, logger: logger)
    /// outputs.restoreAnnounced(stored.announced)
    /// outputs.restoreDismissed(stored.dismissed)
    /// ```
    public static func storedAnnouncements(of output: String, in store: any RegionStoring, logger: Logger) async throws
        -> (announced: Set<BeaconIdentity>, dismissed: Set<BeaconIdentity>) {
        func read(_ names: [String], _ what: String) -> Set<BeaconIdentity> {
            var beacons = Set<BeaconIdentity>()
            var unreadable: [String] = []
            for name in names {
                if let identity = BeaconIdentity(description: name) { beacons.insert(identity) } else { unreadable.append(name) }
            }
            if let first = unreadable.first {
                logger.warning("stored Home Assistant \(what) name no beacon: left out",
                               metadata: ["output": "\(output)", "count": "\(unreadable.count)", "first": "\(first.prefix(120))"])
            }
            return beacons
        }
        return (read(try await store.announcedBeacons(output), "announcements"), read(try await store.dismissedBeacons(output), "dismissals"))
    }

    /// Reads them into `outputs` (``storedAnnouncements(of:in:logger:)``).
    public mutating func restoreStoredAnnouncements(of output: String, in store: any RegionStoring, logger: Logger) async throws {
        let stored = try await Self.storedAnnouncements(of: output, in: store, logger: logger)
        restoreAnnounced(stored.announced)
        restoreDismissed(stored.dismissed)
    }

    /// Records the beacons of `after` not in `before` as announced by `output`, before their
    /// entities are published: recorded after, a failure or a crash in between left an entity in
    /// Home Assistant that a restart did not know (its departure then removed the topic it reads,
    /// and the limit let another beacon in). A beacon recorded but never published is harmless:
    /// every discovery round publishes the entities of all recorded beacons.
    static func recordAnnouncements(_ after: Set<BeaconIdentity>, since before: Set<BeaconIdentity>, of output: String,
                                    in store: any RegionStoring) async throws {
        guard after.count > before.count else { return }
        try await store.addAnnouncedBeacons(after.subtracting(before).map(\.description).sorted(), output: output)
    }

    /// The announced beacons of `outputs` whose tracker configuration topics are `topics`
    /// (emptied: their devices deleted in Home Assistant), dismissed in `store` first; the caller
    /// then forgets them in its outputs (``forget(_:)``). A topic of no announced beacon (an echo
    /// of the output's own removal, a beacon forgotten already, a made-up one) is ignored.
    static func forgetRemoved(_ topics: Set<String>, of outputs: PresenceOutputs, output: String, in store: any RegionStoring) async throws -> Set<BeaconIdentity> {
        let beacons = outputs.announcedBeacons(trackerConfigTopics: topics)
        guard !beacons.isEmpty else { return [] }
        try await store.dismissAnnouncedBeacons(beacons.map(\.description).sorted(), output: output)
        return beacons
    }
}
