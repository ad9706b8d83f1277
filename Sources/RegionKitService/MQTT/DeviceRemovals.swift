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
/// messages here, and ``apply(outputs:forget:output:store:publish:logger:)`` forgets the beacons:
/// out of the store's announced beacons and out of the limit, their topics removed; a beacon is
/// announced again only when it is next placed in a room.
///
/// The output's own removal comes back on its subscription; it is told apart (``apply``
/// expects it) so that it cannot forget a beacon announced again meanwhile.
///
/// ```swift
/// let removals = DeviceRemovals(discovery: discovery)
/// // in the client's onMessage: guard !removals.received(message) else { return }
/// // in the publishing loop:
/// await removals.apply(outputs: { outputs }, forget: { outputs.forget($0, placed: placed) }, output: name, store: store,
///                      publish: { try await client.publish($0) }, logger: logger)
/// ```
final class DeviceRemovals: Sendable {
    let discovery: HomeAssistantDiscovery
    private let state = LockedBox(State())

    private struct State {
        /// Tracker configuration topics emptied by someone else, not applied yet.
        var requested: Set<String> = []
        /// Tracker configuration topics this output emptied, whose copy has not come back yet.
        var echoes: Set<String> = []
        /// Removal messages not published yet (the connection was lost).
        var unsent: [MQTTMessage] = []
        var forgotten = 0
    }

    init(discovery: HomeAssistantDiscovery) {
        self.discovery = discovery
    }

    /// Beacons forgotten since start.
    var forgotten: Int { state.withLock { $0.forgotten } }

    /// Whether there is something for ``apply`` to do.
    var isPending: Bool { state.withLock { !$0.requested.isEmpty || !$0.unsent.isEmpty } }

    /// Reads `message`: true when it is on a tracker configuration topic (then it is this type's,
    /// not a sighting). An empty one asks for its beacon to be forgotten, unless it is the copy
    /// of this output's own removal. (Configurations, announced ones included, are not empty.)
    func received(_ message: MQTTMessage) -> Bool {
        guard discovery.trackerObject(configTopic: message.topic) != nil else { return false }
        guard message.payload.isEmpty else { return true }
        state.withLock { state in
            if state.echoes.remove(message.topic) == nil { state.requested.insert(message.topic) }
        }
        return true
    }

    /// A new connection: copies of removals sent on the last one no longer come.
    func connected() {
        state.withLock { $0.echoes.removeAll() }
    }

    /// Forgets the beacons whose devices were deleted: `outputs` gives the output's current
    /// outputs, the beacons are forgotten in `store` (under `output`'s name), then by `forget`
    /// (``PresenceOutputs/forget(_:placed:)``, whose messages `publish` sends). Call it where the
    /// output makes its announcements, never beside one (a discovery round or an events round
    /// under way could otherwise announce a beacon forgotten meanwhile). A store failure keeps
    /// the requests, a failed publication its messages, for the next call.
    func apply(outputs: () -> PresenceOutputs, forget: (Set<BeaconIdentity>) -> [PresenceMessage], output: String,
               store: any RegionStoring, publish: ([MQTTMessage]) async throws -> Void, logger: Logger) async {
        let (requested, unsent) = state.withLock { state in
            defer { state.requested.removeAll(); state.unsent.removeAll() }
            return (state.requested, state.unsent)
        }
        var messages = unsent
        if !requested.isEmpty {
            let beacons: Set<BeaconIdentity>
            do {
                beacons = try await PresenceOutputs.forgetRemoved(requested, of: outputs(), output: output, in: store)
            } catch {
                logger.error("cannot forget beacons deleted in Home Assistant (tried again)", metadata: ["error": "\((error as? RegionKitError)?.message ?? "\(error)")"])
                state.withLock { $0.requested.formUnion(requested); $0.unsent = unsent + $0.unsent }
                return
            }
            if !beacons.isEmpty {
                let removals = forget(beacons).map(PresenceHub.mqtt)
                messages += removals
                let first = beacons.min()!
                logger.notice("Home Assistant deleted beacon devices: forgotten (announced again when next placed in a room)",
                              metadata: ["beacons": "\(beacons.count)", "first": "\(first)", "output": "\(output)"])
                state.withLock { $0.forgotten += beacons.count }
            }
        }
        guard !messages.isEmpty else { return }
        // Expected back before they are sent: the copy can arrive before the acknowledgement.
        let ownTopics = messages.filter { $0.payload.isEmpty && discovery.trackerObject(configTopic: $0.topic) != nil }.map(\.topic)
        state.withLock { $0.echoes.formUnion(ownTopics) }
        do {
            try await publish(messages)
        } catch {
            state.withLock { $0.unsent = messages + $0.unsent }
            logger.warning("the topics of beacons deleted in Home Assistant not removed yet (tried again)", metadata: ["error": "\(error)"])
        }
    }
}
