import Logging
import RegionKitConcurrency
import RegionKitCore
import RegionKitMQTT
import RegionKitStore

/// Beacon devices deleted in Home Assistant, read from the broker and forgotten. When the user
/// deletes an MQTT device, Home Assistant empties its entities' configuration topics (an empty
/// retained message each); so does `mosquitto_pub -r -n -t <config topic>`. Before, the next
/// discovery round (every Home Assistant restart) announced the beacon again and the device came
/// back. Now an output that subscribes to ``HomeAssistantDiscovery/trackerConfigFilter`` hands its
/// messages here, and ``apply(outputs:forget:messages:output:store:publish:logger:)`` dismisses
/// the beacons (``PresenceOutputs/forget(_:)``): recorded in the store, out of the limit, their
/// topics removed; a beacon is announced again only when it is placed anew.
///
/// The output's own removal comes back on its subscription: it is told apart (``apply`` counts
/// the copies it expects per topic, and a configuration arriving on the topic afterwards proves
/// every earlier copy has passed), so it cannot dismiss a beacon announced again meanwhile.
///
/// ```swift
/// let removals = DeviceRemovals(discovery: discovery)
/// // in the client's onMessage: guard !removals.received(message) else { return }
/// // in the publishing loop:
/// await removals.apply(outputs: { outputs }, forget: { outputs.forget($0) }, messages: { outputs.removalMessages($0, placed: placed) },
///                      output: name, store: store, publish: { try await client.publish($0) }, logger: logger)
/// ```
final class DeviceRemovals: Sendable {
    let discovery: HomeAssistantDiscovery
    private let state = LockedBox(State())

    private struct State {
        /// Tracker configuration topics emptied by someone else, not applied yet.
        var requested: Set<String> = []
        /// Copies of this output's own removals still to come back, per tracker configuration topic.
        var echoes: [String: Int] = [:]
        /// Dismissed beacons whose topics are not removed yet (the connection was lost).
        var unsent: Set<BeaconIdentity> = []
        var forgotten = 0
    }

    init(discovery: HomeAssistantDiscovery) {
        self.discovery = discovery
    }

    /// Beacons dismissed since start.
    var forgotten: Int { state.withLock { $0.forgotten } }

    /// Whether there is something for ``apply`` to do.
    var isPending: Bool { state.withLock { !$0.requested.isEmpty || !$0.unsent.isEmpty } }

    /// Reads `message`: true when it is on a tracker configuration topic (then it is this type's,
    /// not a sighting). An empty one asks for its beacon to be dismissed, unless it is the copy of
    /// this output's own removal. A configuration (the output's own announcement coming back, or
    /// the retained one at a subscription) means every earlier copy on its topic has passed: the
    /// broker keeps one connection's messages in order.
    func received(_ message: MQTTMessage) -> Bool {
        guard discovery.trackerObject(configTopic: message.topic) != nil else { return false }
        state.withLock { state in
            if !message.payload.isEmpty {
                state.echoes[message.topic] = nil
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

    /// Dismisses the beacons whose devices were deleted: `outputs` gives the output's current
    /// outputs, the beacons are dismissed in `store` (under `output`'s name), then by `forget`
    /// (``PresenceOutputs/forget(_:)``); `messages` (``PresenceOutputs/removalMessages(_:placed:)``,
    /// with the beacons' placement now) says what `publish` sends. Call it where the output makes
    /// its announcements, never beside one (a discovery round or an events round under way could
    /// otherwise announce a beacon dismissed meanwhile). A store failure keeps the requests, a
    /// failed publication its beacons, for the next call.
    func apply(outputs: () -> PresenceOutputs, forget: (Set<BeaconIdentity>) -> Void, messages: (Set<BeaconIdentity>) -> [PresenceMessage],
               output: String, store: any RegionStoring, publish: ([MQTTMessage]) async throws -> Void, logger: Logger) async {
        let (requested, unsent) = state.withLock { state in
            defer { state.requested.removeAll(); state.unsent.removeAll() }
            return (state.requested, state.unsent)
        }
        var beacons = unsent
        if !requested.isEmpty {
            let dismissed: Set<BeaconIdentity>
            do {
                dismissed = try await PresenceOutputs.forgetRemoved(requested, of: outputs(), output: output, in: store)
            } catch {
                logger.error("cannot record beacons deleted in Home Assistant (tried again)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                state.withLock { $0.requested.formUnion(requested); $0.unsent.formUnion(unsent) }
                return
            }
            if let first = dismissed.min() {
                forget(dismissed)
                beacons.formUnion(dismissed)
                logger.notice("Home Assistant deleted beacon devices: dismissed (announced again when placed anew)",
                              metadata: ["beacons": "\(dismissed.count)", "first": "\(first)", "output": "\(output)"])
                state.withLock { $0.forgotten += dismissed.count }
            }
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
