import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// What the broker says of this site's beacon entities: an output (the hub, the cluster's outputs
/// holder) subscribes to ``HomeAssistantDiscovery/trackerConfigFilter``, hands the messages to
/// ``received(_:)``, and calls ``apply(outputs:update:messages:output:store:publish:logger:)``
/// where it makes its announcements.
///
/// - **Devices deleted in Home Assistant.** When the user deletes an MQTT device, Home Assistant
///   empties its entities' configuration topics (an empty retained message each); so does
///   `mosquitto_pub -r -n -t <config topic>`. Before, the next discovery round (every Home
///   Assistant restart) announced the beacon again and the device came back. Now the beacon is
///   dismissed (``PresenceOutputs/forget(_:)``): recorded in the store, out of the limit, its
///   topics removed; announced again only when it is placed anew. The output's own removal comes
///   back on the subscription: it is told apart (the copies expected are counted per topic, and a
///   configuration arriving on the topic afterwards proves every earlier copy has passed), so it
///   cannot dismiss a beacon announced again meanwhile.
/// - **Entities nobody recorded.** At each subscription the broker sends the configurations it
///   keeps. A beacon with one that the output does not count as announced (announced by a version
///   before the announcements were recorded, or recorded in a store since lost) is adopted
///   (``PresenceOutputs/adoptable(_:)``): recorded, its entities re-sent by discovery rounds, its
///   departures kept retained for its device tracker. Its departure used to remove the topic the
///   tracker reads.
///
/// ```swift
/// let watch = TrackerConfigWatch(discovery: discovery)
/// // in the client's onMessage: guard !watch.received(message) else { return }
/// // in the publishing loop:
/// await watch.apply(outputs: { outputs }, update: { outputs = $0 }, messages: { outputs.removalMessages($0, placed: placed) },
///                   output: name, store: store, publish: { try await client.publish($0) }, logger: logger)
/// ```
final class TrackerConfigWatch: Sendable {
    let discovery: HomeAssistantDiscovery
    private let state = LockedBox(State())

    private struct State {
        /// Tracker configuration topics emptied by someone else, not applied yet.
        var requested: Set<String> = []
        /// Retained configurations' beacons not counted as announced, not looked at yet.
        var found: Set<BeaconIdentity> = []
        /// Copies of this output's own removals still to come back, per tracker configuration topic.
        var echoes: [String: Int] = [:]
        /// Dismissed beacons whose topics are not removed yet (the connection was lost).
        var unsent: Set<BeaconIdentity> = []
        var forgotten = 0
        var adopted = 0
    }

    /// At most this many retained configurations wait to be looked at (a broker holding more
    /// than the limits allow is not followed further).
    static let foundCapacity = 2 * BeaconAnnouncement.largestMaximum

    init(discovery: HomeAssistantDiscovery) {
        self.discovery = discovery
    }

    /// Beacons dismissed since start.
    var forgotten: Int { state.withLock { $0.forgotten } }
    /// Beacons adopted since start.
    var adopted: Int { state.withLock { $0.adopted } }

    /// Whether there is something for
    /// ``apply(outputs:update:messages:output:store:publish:logger:)`` to do.
    var isPending: Bool { state.withLock { !$0.requested.isEmpty || !$0.unsent.isEmpty || !$0.found.isEmpty } }

    /// Drops from what was found the beacons `outputs` announces or dismissed already (at every
    /// subscription the broker sends every announced beacon's configuration): then ``isPending``
    /// says whether ``apply(outputs:update:messages:output:store:publish:logger:)`` has anything to
    /// do, without waiting for a discovery round's lock.
    func discardKnown(_ outputs: PresenceOutputs) {
        state.withLock { state in
            guard !state.found.isEmpty else { return }
            state.found = state.found.filter { !outputs.announcedBeacons.contains($0) && !outputs.dismissedBeacons.contains($0) }
        }
    }

    /// Reads `message`: true when it is on a tracker configuration topic (then it is this type's,
    /// not a sighting). An empty one asks for its beacon to be dismissed, unless it is the copy of
    /// this output's own removal. A configuration (the output's own announcement coming back, or
    /// a retained one at a subscription) means every earlier copy on its topic has passed: the
    /// broker keeps one connection's messages in order; a retained one names a beacon to adopt
    /// if it is not announced.
    func received(_ message: MQTTMessage) -> Bool {
        guard discovery.trackerObject(configTopic: message.topic) != nil else { return false }
        let found = message.retain && !message.payload.isEmpty ? discovery.beacon(trackerConfigTopic: message.topic) : nil
        state.withLock { state in
            if !message.payload.isEmpty {
                state.echoes[message.topic] = nil
                if let found, state.found.count < Self.foundCapacity { state.found.insert(found) }
            } else if let expected = state.echoes[message.topic] {
                state.echoes[message.topic] = expected > 1 ? expected - 1 : nil
            } else {
                state.requested.insert(message.topic)
            }
        }
        return true
    }

    /// A new connection: copies of removals sent on the last one no longer come.
    func connected() {
        state.withLock { $0.echoes.removeAll() }
    }

    /// Adopts the beacons found and dismisses those whose devices were deleted: `outputs` gives
    /// the output's current outputs and `update` takes them back changed; the store is written
    /// first (under `output`'s name). `messages` (``PresenceOutputs/removalMessages(_:placed:)``,
    /// with the beacons' placement now) says what `publish` sends for the dismissed. Call it where
    /// the output makes its announcements, never beside one (a discovery round or an events round
    /// under way could otherwise announce a beacon dismissed meanwhile). A store failure keeps
    /// what was found and asked for, a failed publication its beacons, for the next call.
    func apply(outputs: () -> PresenceOutputs, update: (PresenceOutputs) -> Void, messages: (Set<BeaconIdentity>) -> [PresenceMessage],
               output: String, store: any RegionStoring, publish: ([MQTTMessage]) async throws -> Void, logger: Logger) async {
        let (requested, found, unsent) = state.withLock { state in
            defer { state.requested.removeAll(); state.found.removeAll(); state.unsent.removeAll() }
            return (state.requested, state.found, state.unsent)
        }
        func keep() { state.withLock { $0.requested.formUnion(requested); $0.found.formUnion(found); $0.unsent.formUnion(unsent) } }
        var beacons = unsent
        do {
            let candidates = outputs().adoptable(found)
            if !candidates.isEmpty {
                // Recorded already (announced by a round whose acknowledgement a lost connection
                // kept from this output): counted as announced, not adopted.
                let recorded = Set(try await store.announcedBeacons(output).compactMap(BeaconIdentity.init(description:)))
                let adopted = candidates.subtracting(recorded)
                if !adopted.isEmpty { try await store.addAnnouncedBeacons(adopted.map(\.description).sorted(), output: output) }
                var changed = outputs()
                changed.restoreAnnounced(candidates)
                update(changed)
                if let first = adopted.min() {
                    logger.notice("Home Assistant entities found on the broker, not recorded as announced: adopted",
                                  metadata: ["beacons": "\(adopted.count)", "first": "\(first)", "output": "\(output)"])
                    state.withLock { $0.adopted += adopted.count }
                }
            }
            if !requested.isEmpty {
                let dismissed = try await PresenceOutputs.forgetRemoved(requested, of: outputs(), output: output, in: store)
                if let first = dismissed.min() {
                    var changed = outputs()
                    changed.forget(dismissed)
                    update(changed)
                    beacons.formUnion(dismissed)
                    logger.notice("Home Assistant deleted beacon devices: dismissed (announced again when placed anew)",
                                  metadata: ["beacons": "\(dismissed.count)", "first": "\(first)", "output": "\(output)"])
                    state.withLock { $0.forgotten += dismissed.count }
                }
            }
        } catch {
            logger.error("cannot record the beacons' Home Assistant entities (tried again)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
            keep()
            return
        }
        guard !beacons.isEmpty else { return }
        let removals = messages(beacons).map(PresenceHub.mqtt)
        // Expected back before they are sent: the copy can arrive before the acknowledgement.
        let own = removals.filter { $0.payload.isEmpty && discovery.trackerObject(configTopic: $0.topic) != nil }.map(\.topic)
        state.withLock { state in for topic in own { state.echoes[topic, default: 0] += 1 } }
        do {
            try await publish(removals)
        } catch {
            state.withLock { $0.unsent.formUnion(beacons) }
            logger.warning("the topics of beacons deleted in Home Assistant not removed yet (tried again)", metadata: ["error": "\(error)"])
        }
    }
}
